import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { realpath } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { createHostFactsCache, currentProtection, type HostFactsCache } from "./host-facts.js";

// Attacks on the kept policy (lookup-memo.ts): a change completed before a call must show in that
// call's policy, however it was made.

const linux = process.platform === "linux";

/** Whether python3 is here to hold a shared writable memory map of a file. */
const python = (() => {
  try {
    execFileSync("python3", ["-c", "import mmap"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/**
 * A process holding a shared writable map of `file`: each `write(text)` copies `text` over the
 * start of the map (as a command that opened the file before it was protected could).
 */
async function mapped(file: string) {
  const child: ChildProcessWithoutNullStreams = spawn("python3", [
    "-c",
    [
      "import mmap, os, sys",
      "fd = os.open(sys.argv[1], os.O_RDWR)",
      "m = mmap.mmap(fd, 0)",
      "for line in sys.stdin:",
      "    data = bytes.fromhex(line.strip())",
      "    m[0:len(data)] = data",
      "    print('ok', flush=True)",
    ].join("\n"),
    file,
  ]);
  const write = async (text: string) => {
    const answered = once(child.stdout, "data");
    child.stdin.write(`${Buffer.from(text).toString("hex")}\n`);
    await answered;
  };
  return { write, close: () => child.kill() };
}

describe.skipIf(!linux)("the kept policy against changes that make no inotify event", () => {
  let cache: HostFactsCache;
  let root: string;
  beforeEach(async () => {
    cache = createHostFactsCache();
    root = await realpath(await useTempDir({ prefix: "pleach-memo-attack-" }));
    return () => cache.close();
  });
  const protectedNow = async () =>
    (await currentProtection({ root, cache, hostEnvironment: {} })).paths.map((each) => each.path);

  /** Ask until the protection is kept (the same array comes back twice). */
  async function kept(): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const first = await currentProtection({ root, cache, hostEnvironment: {} });
      const second = await currentProtection({ root, cache, hostEnvironment: {} });
      if (first === second) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("the protection was never kept");
  }

  it.skipIf(!python)(
    "sees a git config rewritten through a shared memory map that was written to before (no new stamp)",
    async () => {
      execFileSync("git", ["init", "-q", root]);
      const config = path.join(root, ".git", "config");
      const padded = (text: string) => `${text}${"#".repeat(400 - text.length - 1)}\n`;
      writeFileSync(config, padded("[core]\n\tbare = false\n"));
      const map = await mapped(config);
      try {
        // The first write through the map moves the file's stamp; later ones, until the kernel
        // writes the page back (half a minute), do not.
        await map.write("[core]\n\tbare = false\n");
        await new Promise((resolve) => setTimeout(resolve, 2_100));
        await kept();
        expect(await protectedNow()).not.toContain(path.join(root, "hooks"));
        await map.write("[core]\n\thooksPath=hooks\n");
        expect(await protectedNow()).toContain(path.join(root, "hooks"));
      } finally {
        map.close();
      }
    },
    20_000,
  );
});
