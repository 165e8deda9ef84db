import { spawnSync } from "node:child_process";
import { chmod, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxMode } from "@pleach/core/sandbox";
import { makeTempDir } from "@pleach/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { workspaceRoot } from "../beneath.js";
import { createLocalSandbox } from "../local-sandbox.js";
import { hiddenWith } from "../os/command-wrapper.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";
import { currentProtection } from "../os/host-facts.js";
import { createRawFiles } from "./raw-files.js";

// The server's file route reads and writes bytes itself, past the local client's strings: every
// outcome must still be the local client's. Each case runs against both, on twin workspaces.

const MAX_FILE_BYTES = 64 * 1024;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A workspace planted with what the cases need, and a folder outside it. */
async function plantedWorkspace(): Promise<{ root: string; outside: string }> {
  const workspace = await makeTempDir("pleach-raw-");
  const elsewhere = await makeTempDir("pleach-raw-outside-");
  cleanups.push(workspace.cleanup, elsewhere.cleanup);
  const root = workspace.dir;
  const outside = elsewhere.dir;
  await writeFile(path.join(outside, "secret.txt"), "outside");
  await mkdir(path.join(root, "dir/sub"), { recursive: true });
  await writeFile(path.join(root, "dir/file.txt"), "inside\n");
  await writeFile(path.join(root, "script.sh"), "#!/bin/sh\n");
  // Group-writable, which the usual umask would take away from a new file.
  await chmod(path.join(root, "script.sh"), 0o764);
  await writeFile(path.join(root, "big.bin"), Buffer.alloc(MAX_FILE_BYTES + 1, 1));
  await writeFile(path.join(root, "binary.bin"), Buffer.from([0, 255, 128, 10, 13, 0xc3]));
  await mkdir(path.join(root, ".git"));
  await writeFile(path.join(root, ".git/config"), "[core]\n");
  await symlink("dir/file.txt", path.join(root, "inner-link"));
  await symlink(path.join(outside, "secret.txt"), path.join(root, "outer-link"));
  await symlink(outside, path.join(root, "outer-dir"));
  await symlink(path.join(outside, "not-yet"), path.join(root, "dangling"));
  expect(spawnSync("mkfifo", [path.join(root, "fifo")]).status).toBe(0);
  return { root, outside };
}

/** What a call came to: its bytes, or its error code. */
async function outcome(call: () => Promise<Buffer | undefined>): Promise<string> {
  try {
    const bytes = await call();
    return bytes === undefined ? "done" : `bytes ${bytes.toString("hex")}`;
  } catch (error) {
    return `error ${(error as { code?: string }).code}`;
  }
}

/** Each file of a workspace, with its mode and bytes (links as links). */
async function snapshot(root: string): Promise<Record<string, string>> {
  const listing = spawnSync("find", [".", "-not", "-name", "*.pleach-*.tmp"], {
    cwd: root,
    encoding: "utf8",
  });
  const entries: Record<string, string> = {};
  for (const entry of listing.stdout.split("\n").filter((line) => line !== "")) {
    const full = path.join(root, entry);
    const info = await stat(full).catch(() => undefined);
    if (info?.isFile()) {
      const mode = (info.mode & 0o7777).toString(8);
      entries[entry] = `${mode} ${(await readFile(full)).toString("hex")}`;
    } else entries[entry] = info?.isDirectory() ? "dir" : "other";
  }
  return entries;
}

/** A case's path in the workspace `root` (`ROOT` stands for it). */
const at = (filePath: unknown, root: string) =>
  typeof filePath === "string" ? filePath.replace("ROOT", root) : filePath;

const READS: unknown[] = [
  "dir/file.txt",
  "ROOT/dir/file.txt",
  "ROOT/../escape.txt",
  "binary.bin",
  "missing.txt",
  "missing/deeper.txt",
  "dir",
  "dir/file.txt/below",
  "fifo",
  "inner-link",
  "outer-link",
  "outer-dir/secret.txt",
  "dangling",
  "big.bin",
  ".git/config",
  "../escape.txt",
  "/etc/passwd",
  "",
  "a\0b",
  42,
];

const WRITES: unknown[] = [
  "new.txt",
  "ROOT/dir/absolute.txt",
  "new/deep/file.txt",
  "dir/file.txt",
  "script.sh",
  "dir",
  "fifo",
  "inner-link",
  "outer-link",
  "outer-dir/new.txt",
  "dangling",
  ".git/config",
  ".git/hooks/pre-commit",
  ".bashrc",
  ".vscode/tasks.json",
  "dir/file.txt/below",
  "../escape.txt",
  "/etc/pleach-escape",
  "",
  "a\0b",
  42,
];

describe.each<SandboxMode>(["workspace-write", "read-only", "danger-full-access"])(
  "raw file access in %s, against the local client",
  (mode) => {
    async function twins() {
      const local = await plantedWorkspace();
      const raw = await plantedWorkspace();
      const client = await createLocalSandbox({
        root: local.root,
        mode,
        maxFileBytes: MAX_FILE_BYTES,
        commandWrapper: createCommandWrapper({ backend: "none" }),
      });
      const files = createRawFiles({
        root: workspaceRoot(raw.root, raw.root),
        mode,
        maxFileBytes: MAX_FILE_BYTES,
        protection: () => currentProtection({ root: raw.root }),
        hidden: (scope) =>
          hiddenWith(createCommandWrapper({ backend: "none" }), raw.root, mode, scope),
      });
      return { local, raw, client, files };
    }

    it("reads with the same bytes and the same refusals", async () => {
      const { local, raw, client, files } = await twins();
      for (const filePath of READS) {
        const viaLocal = await outcome(async () => {
          const text = await client.readFile(at(filePath, local.root) as string, {
            encoding: "base64",
          });
          return Buffer.from(text, "base64");
        });
        const viaRaw = await outcome(() => files.read(at(filePath, raw.root)));
        expect([filePath, viaRaw]).toEqual([filePath, viaLocal]);
      }
    });

    it("writes the same bytes and modes, and refuses the same writes", async () => {
      const { local, raw, client, files } = await twins();
      const bytes = Buffer.from([0x00, 0xff, 0x41, 0x0a, 0xe9, 0x80]);
      for (const filePath of WRITES) {
        const viaLocal = await outcome(async () => {
          await client.writeFile(at(filePath, local.root) as string, bytes.toString("base64"), {
            encoding: "base64",
          });
          return undefined;
        });
        const viaRaw = await outcome(async () => {
          await files.write(at(filePath, raw.root), bytes);
          return undefined;
        });
        expect([filePath, viaRaw]).toEqual([filePath, viaLocal]);
      }
      expect(await snapshot(raw.root)).toEqual(await snapshot(local.root));
      expect(await readFile(path.join(raw.outside, "secret.txt"), "utf8")).toBe("outside");
      await expect(stat(path.join(raw.outside, "new.txt"))).rejects.toThrow();
      await expect(stat(path.join(raw.outside, "not-yet"))).rejects.toThrow();
    });
  },
);
