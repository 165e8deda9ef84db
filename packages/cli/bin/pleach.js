#!/usr/bin/env node
// A committed launcher, so npm can link the bin before the TypeScript build has run.
import { existsSync } from "node:fs";

const entry = new URL("../dist/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    "pleach is not built yet: run `npm run build` in the pleach checkout first.\n",
  );
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
