// The built diff engine the benchmark measures (`npx tsc -b` first), or with `--engine FILE` the
// tools entry (`dist/tools/index.js`) of another build, to measure a change against it.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const flag = process.argv.indexOf("--engine");
const entry =
  flag === -1
    ? path.resolve(here, "../../packages/coding-agent/dist/tools/index.js")
    : path.resolve(process.argv[flag + 1] ?? "");
if (!existsSync(entry)) {
  console.error(`Build first (npx tsc -b): ${entry} is missing`);
  process.exit(1);
}

// `editText` (edit_file's decision for one edit) is missing from builds before it was exported; the
// benchmark then reads edit_file's earlier rule from `locateTolerantly`.
export const { parseUnifiedDiff, applyFilePatch, locateTolerantly, editText } = await import(entry);
