import { MAX_FAILURE_NAME_LENGTH, MAX_FAILURE_NAMES } from "./test-runner-counts.js";

/** Keeps the first distinct names, bounded, so huge outputs cannot grow memory without limit. */
export class NameList {
  readonly names: string[] = [];
  readonly #seen = new Set<string>();

  add(rawName: string): void {
    const name = rawName.trim().slice(0, MAX_FAILURE_NAME_LENGTH);
    if (name === "" || this.names.length >= MAX_FAILURE_NAMES || this.#seen.has(name)) return;
    this.#seen.add(name);
    this.names.push(name);
  }
}
