/**
 * Collects a stream's bytes in bounded memory: the first half of the budget as the head, the
 * last half as the tail, and a count of what fell in between. However much a command prints,
 * memory stays near `maxBytes` plus one chunk.
 */
export class BoundedOutput {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #totalBytes = 0;

  constructor(maxBytes: number) {
    this.#headLimit = Math.ceil(maxBytes / 2);
    this.#tailLimit = maxBytes - this.#headLimit;
  }

  /** Bytes seen so far, kept or not. */
  get totalBytes(): number {
    return this.#totalBytes;
  }

  /** Whether some bytes were dropped. */
  get truncated(): boolean {
    return this.#totalBytes > this.#headLimit + this.#tailLimit;
  }

  push(chunk: Buffer): void {
    this.#totalBytes += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#headLimit) {
      const take = Math.min(rest.length, this.#headLimit - this.#headBytes);
      this.#head.push(rest.subarray(0, take));
      this.#headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.#tailLimit === 0) return;
    this.#tail.push(rest);
    this.#tailBytes += rest.length;
    // Drop whole chunks from the front while what is left still covers the tail budget.
    while (
      this.#tail.length > 1 &&
      this.#tailBytes - (this.#tail[0]?.length ?? 0) >= this.#tailLimit
    ) {
      this.#tailBytes -= this.#tail.shift()?.length ?? 0;
    }
  }

  /** The kept text, with a marker where bytes were dropped. */
  text(label: string): string {
    const head = Buffer.concat(this.#head).toString("utf8");
    let tail = Buffer.concat(this.#tail);
    if (tail.length > this.#tailLimit) tail = tail.subarray(tail.length - this.#tailLimit);
    const dropped = this.#totalBytes - this.#headBytes - tail.length;
    if (dropped <= 0) return head + tail.toString("utf8");
    return `${head}\n[... ${dropped.toLocaleString("en-US")} bytes of ${label} cut ...]\n${tail.toString("utf8")}`;
  }
}
