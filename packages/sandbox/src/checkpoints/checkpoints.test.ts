import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { workspaceRoot } from "../beneath.js";
import { createLocalSandbox } from "../local-sandbox.js";
import { createCheckpoints } from "./checkpoints.js";
import { makeLink, openEntry, readEntries } from "./workspace-entries.js";

/** Every entry under `root` but `skip`: its type, mode bits, bytes or link target. */
function snapshot(root: string, skip: readonly string[] = [".git"]): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const full = path.join(folder, name);
      const relative = path.relative(root, full);
      if (skip.includes(relative)) continue;
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) entries[relative] = `link ${readlinkSync(full)}`;
      else if (stat.isDirectory()) {
        entries[relative] = "folder";
        walk(full);
      } else {
        entries[relative] =
          `file ${(stat.mode & 0o777).toString(8)} ${readFileSync(full).toString("base64")}`;
      }
    }
  };
  walk(root);
  return entries;
}

describe("checkpoints of a local workspace", () => {
  it("restore a step that deleted, edited, made and changed files, byte for byte, and undo the restore", async () => {
    const root = await useTempDir();
    mkdirSync(path.join(root, "src/deep"), { recursive: true });
    writeFileSync(path.join(root, "src/a.ts"), "export const a = 1;\r\n");
    writeFileSync(path.join(root, "src/deep/gone.txt"), "to be deleted\n");
    writeFileSync(path.join(root, "run.sh"), "#!/bin/sh\necho run\n");
    chmodSync(path.join(root, "run.sh"), 0o755);
    writeFileSync(path.join(root, "binary.bin"), Buffer.from([0, 255, 10, 13, 0x1b, 0x80]));
    writeFileSync(path.join(root, 'odd "name"\nwith\tbytes é'), "odd\n");
    symlinkSync("src/a.ts", path.join(root, "link-to-a"));
    symlinkSync("/etc/passwd", path.join(root, "link-out"));
    writeFileSync(path.join(root, ".gitattributes"), "* text eol=crlf filter=evil\n");
    const client = await createLocalSandbox({ root, mode: "workspace-write" });
    try {
      const before = snapshot(root);
      const checkpoint = await client.checkpoints.take("step 1");
      expect(checkpoint).toMatchObject({ label: "step 1", files: 8, skipped: [] });
      // The step, as a command would make it.
      const step = await client.exec(
        [
          "rm src/deep/gone.txt",
          "printf 'export const a = 2;\\n' > src/a.ts",
          "mkdir -p new/folder && echo made > new/folder/file.txt",
          "chmod -x run.sh",
          "rm link-to-a && echo 'now a file' > link-to-a",
          "rm binary.bin && mkdir binary.bin && echo x > binary.bin/inside",
          "ln -s src new-link",
        ].join(" && "),
      );
      expect(step.exitCode).toBe(0);
      const after = snapshot(root);
      expect(after).not.toEqual(before);
      const restored = await client.checkpoints.restore(checkpoint.id);
      expect(snapshot(root)).toEqual(before);
      expect(restored.checkpoint).toBe(checkpoint.id);
      expect(restored.removed.sort()).toEqual([
        "binary.bin/inside",
        "new-link",
        "new/folder/file.txt",
      ]);
      expect(restored.written.sort()).toEqual(
        ["binary.bin", "link-to-a", "run.sh", "src/a.ts", "src/deep/gone.txt"].sort(),
      );
      expect(restored.skipped).toEqual([]);
      // The restore is undone by the checkpoint it took first.
      await client.checkpoints.restore(restored.undo);
      // Empty folders are not kept (git keeps files): the one the step emptied is gone.
      const { "src/deep": emptied, ...afterWithoutEmptied } = after;
      expect(emptied).toBe("folder");
      expect(snapshot(root)).toEqual(afterWithoutEmptied);
      const listed = await client.checkpoints.list();
      expect(listed.map((entry) => entry.label)).toEqual([
        `before restore of ${restored.undo.slice(0, 12)}`,
        `before restore of ${checkpoint.id.slice(0, 12)}`,
        "step 1",
      ]);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("keeps a link that leads out as a link, never what it leads to", async () => {
    const root = await useTempDir();
    symlinkSync("/etc/passwd", path.join(root, "out"));
    const client = await createLocalSandbox({ root, mode: "workspace-write" });
    try {
      const checkpoint = await client.checkpoints.take("links");
      await client.exec("rm out && echo replaced > out");
      await client.checkpoints.restore(checkpoint.id);
      expect(readlinkSync(path.join(root, "out"))).toBe("/etc/passwd");
    } finally {
      await client.close();
    }
  }, 60_000);

  it("leaves the workspace's git repository, its ignored files and its protected paths alone", async () => {
    const root = await useTempDir();
    execFileSync("git", ["init", "-q", root]);
    writeFileSync(path.join(root, ".gitignore"), "ignored.txt\n");
    writeFileSync(path.join(root, "ignored.txt"), "ignored before\n");
    writeFileSync(path.join(root, "tracked.txt"), "tracked\n");
    const gitBefore = snapshot(path.join(root, ".git"), []);
    const client = await createLocalSandbox({ root, mode: "workspace-write" });
    try {
      const checkpoint = await client.checkpoints.take("git");
      expect(checkpoint.files).toBe(2);
      await client.exec("echo ignored after > ignored.txt && echo changed > tracked.txt");
      await client.checkpoints.restore(checkpoint.id);
      expect(readFileSync(path.join(root, "tracked.txt"), "utf8")).toBe("tracked\n");
      // Ignored files are not in checkpoints: what the step did to them stays.
      expect(readFileSync(path.join(root, "ignored.txt"), "utf8")).toBe("ignored after\n");
      expect(snapshot(path.join(root, ".git"), [])).toEqual(gitBefore);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("leaves out hidden files and nested repositories, saying so, and refuses an unknown id", async () => {
    const root = await useTempDir();
    writeFileSync(path.join(root, ".env"), "SECRET=1\n");
    writeFileSync(path.join(root, "kept.txt"), "kept\n");
    execFileSync("git", ["init", "-q", path.join(root, "vendor/lib")]);
    writeFileSync(path.join(root, "vendor/lib/file.txt"), "in a nested repository\n");
    const client = await createLocalSandbox({
      root,
      mode: "workspace-write",
      hideReads: [path.join(root, ".env")],
    });
    try {
      const checkpoint = await client.checkpoints.take("hidden");
      expect(checkpoint.files).toBe(1);
      expect([...checkpoint.skipped].sort()).toEqual([
        ".env (hidden by the read policy)",
        "vendor/lib/ (a nested git repository)",
      ]);
      await expect(client.checkpoints.restore("0123456789abcdef")).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
      await expect(client.checkpoints.restore("../../etc")).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe("checkpoints against a command that swaps folders for links", () => {
  it("never store what a link swapped in leads to outside the workspace", async () => {
    const root = await useTempDir();
    const outside = await useTempDir();
    const store = await useTempDir();
    writeFileSync(path.join(outside, "secret.txt"), "TOPSECRET\n");
    mkdirSync(path.join(root, "d"));
    writeFileSync(path.join(root, "d/secret.txt"), "harmless\n");
    // A folder of the workspace the attacker also swaps in: its own .git, whose config it names.
    mkdirSync(path.join(root, ".git"));
    writeFileSync(path.join(root, ".git/config"), "[core] GITCONFIGSECRET\n");
    writeFileSync(path.join(root, "d/config"), "harmless too\n");
    const swapper = spawn(
      "/bin/bash",
      [
        "-c",
        `cd "$1" && while true; do mv d d.real; ln -s "$2" d; rm d; ln -s .git d; rm d; mv d.real d; done`,
        "swap",
        root,
        outside,
      ],
      { stdio: "ignore" },
    );
    try {
      const checkpoints = createCheckpoints({
        root: workspaceRoot(root, root),
        mode: "workspace-write",
        protection: async () => ({
          root,
          gitEntries: [],
          unreadableFolders: [],
          paths: [],
          ruleFor: () => undefined,
          ruleForIdentity: () => undefined,
        }),
        hidden: () => [],
        storeFolder: store,
      });
      for (let round = 0; round < 40; round += 1) await checkpoints.take(`round ${round}`);
    } finally {
      swapper.kill("SIGKILL");
    }
    const [gitDir] = readdirSync(store);
    const objects = execFileSync(
      "/usr/bin/git",
      [
        "--git-dir",
        path.join(store, gitDir as string),
        "cat-file",
        "--batch-all-objects",
        "--batch",
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    ).toString("utf8");
    expect(objects).toContain("harmless");
    expect(objects).not.toContain("TOPSECRET");
    expect(objects).not.toContain("GITCONFIGSECRET");
  }, 120_000);
});

describe("a checkpoint's reads", () => {
  it("take no file through a folder that became a link, even one to a folder of the workspace", async () => {
    const root = await useTempDir();
    mkdirSync(path.join(root, ".git"));
    writeFileSync(path.join(root, ".git/config"), "[core] GITCONFIGSECRET\n");
    mkdirSync(path.join(root, "real"));
    writeFileSync(path.join(root, "real/config"), "real\n");
    // Listed as a folder's file, then the folder is a link when it is read.
    symlinkSync(".git", path.join(root, "d"));
    const workspace = workspaceRoot(root, root);
    expect(readEntries(workspace, "d", ["d/config"], [], new Map())).toBeUndefined();
    const real = readEntries(workspace, "real", ["real/config"], [], new Map());
    expect(real?.[0]?.[1]).toEqual({ kind: "changed" });
    expect(openEntry(workspace, "d/config", [])).toBeUndefined();
    const opened = openEntry(workspace, "real/config", []);
    expect(opened).toMatchObject({ kind: "open", size: 5, mode: "100644" });
    if (opened?.kind === "open") closeSync(opened.fd);
  });

  it("make a link of a restore through no link on the way, and its missing folders otherwise", async () => {
    const root = await useTempDir();
    mkdirSync(path.join(root, ".git/hooks"), { recursive: true });
    symlinkSync(".git", path.join(root, "d"));
    const workspace = workspaceRoot(root, root);
    expect(() => makeLink(workspace, "d/hooks/pre-commit", "/bin/sh")).toThrow(/is a link now/);
    expect(readdirSync(path.join(root, ".git/hooks"))).toEqual([]);
    makeLink(workspace, "new/deep/l", "../target");
    expect(readlinkSync(path.join(root, "new/deep/l"))).toBe("../target");
  });
});
