// The built diff engine the benchmark measures (`npx tsc -b` first).
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const entry = path.resolve(here, "../../packages/coding-agent/dist/tools/index.js");
if (!existsSync(entry)) {
  console.error("Build first: npx tsc -b");
  process.exit(1);
}

export const { parseUnifiedDiff, applyFilePatch, locateTolerantly } = await import(entry);
