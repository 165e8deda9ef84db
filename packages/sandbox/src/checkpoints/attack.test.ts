import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, truncateSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { workspaceRoot } from "../beneath.js";
import { createCheckpoints } from "./checkpoints.js";
import { setExecutable } from "./workspace-entries.js";

const openPolicy = (root: string) => async () => ({
  root,
  gitEntries: [],
  unreadableFolders: [],
  paths: [],
  ruleFor: () => undefined,
  ruleForIdentity: () => undefined,
});

const mkfifo = (at: string) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn("/usr/bin/mkfifo", [at], { stdio: "ignore" });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`mkfifo ${code}`))));
  });

describe("attacks on checkpoints", () => {
  it("a FIFO a command leaves as a .gitignore does not hang a checkpoint (git's listing is bounded in time)", async () => {
    const root = await useTempDir();
    const store = mkdtempSync(path.join(os.tmpdir(), "pleach-attack-store-"));
    writeFileSync(path.join(root, "a.txt"), "a\n");
    mkdirSync(path.join(root, "sub"));
    await mkfifo(path.join(root, "sub/.gitignore"));
    const checkpoints = createCheckpoints({
      root: workspaceRoot(root, root),
      mode: "workspace-write",
      protection: openPolicy(root),
      hidden: () => [],
      storeFolder: store,
      gitTimeoutMs: 3_000,
    });
    const started = Date.now();
    const outcome = await Promise.race([
      checkpoints.take("step").then(
        () => "taken",
        (error: Error) => `refused: ${error.message}`,
      ),
      new Promise<string>((resolve) => setTimeout(() => resolve("hung"), 15_000)),
    ]);
    expect(outcome).not.toBe("hung");
    expect(outcome).toMatch(/refused: .*took longer than/);
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);

  it("setting a restored file's executable bits does not block on a FIFO swapped in for it", async () => {
    const root = await useTempDir();
    await mkfifo(path.join(root, "run.sh"));
    // With a blocking open the whole process waits for a writer: this one comes after 3 s.
    const writer = spawn(
      "/bin/sh",
      ["-c", 'sleep 3; exec 3>"$1"', "writer", path.join(root, "run.sh")],
      {
        stdio: "ignore",
      },
    );
    try {
      const started = Date.now();
      try {
        setExecutable(workspaceRoot(root, root), "run.sh", true);
      } catch {
        // Refusing it is fine; waiting is not.
      }
      expect(Date.now() - started).toBeLessThan(1_500);
    } finally {
      writer.kill("SIGKILL");
    }
  }, 30_000);
});

describe("attacks on checkpoints: names", () => {
  it("a file whose name is not UTF-8 is named as skipped, and another file's bytes are not taken for it", async () => {
    const root = await useTempDir();
    const store = mkdtempSync(path.join(os.tmpdir(), "pleach-attack-store-"));
    const raw = Buffer.from([0x6e, 0xff, 0x6d, 0x65]); // "n\xffme"
    writeFileSync(Buffer.concat([Buffer.from(`${root}/`), raw]), "bad\n");
    // The name the invalid byte decodes to (U+FFFD), a file of its own.
    writeFileSync(path.join(root, "n\uFFFDme"), "other\n");
    const checkpoints = createCheckpoints({
      root: workspaceRoot(root, root),
      mode: "workspace-write",
      protection: openPolicy(root),
      hidden: () => [],
      storeFolder: store,
    });
    const taken = await checkpoints.take("step");
    expect(taken.files).toBe(1);
    expect(taken.skipped).toEqual(["n\uFFFDme (its name is not UTF-8)"]);
  });
});

describe("attacks on checkpoints: memory", () => {
  // Sparse files cost a command no disk: 32 of 64 MiB (the bounds) made each take hold over 4 GiB
  // of the host process while a take held all it read; it now streams one file at a time.
  it("sparse files a command makes cost the host process no more memory than what they hold on disk", async () => {
    const root = await useTempDir();
    const store = mkdtempSync(path.join(os.tmpdir(), "pleach-attack-store-"));
    const size = 64 * 1024 * 1024;
    for (let index = 0; index < 4; index += 1) {
      writeFileSync(path.join(root, `sparse-${index}`), "");
      truncateSync(path.join(root, `sparse-${index}`), size);
    }
    const checkpoints = createCheckpoints({
      root: workspaceRoot(root, root),
      mode: "workspace-write",
      protection: openPolicy(root),
      hidden: () => [],
      storeFolder: store,
    });
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    try {
      await checkpoints.take("step");
    } finally {
      clearInterval(sampler);
    }
    // 256 MiB read: a streaming take would hold about one file's worth at a time.
    expect(peak - before).toBeLessThan(2 * size);
  }, 60_000);
});
