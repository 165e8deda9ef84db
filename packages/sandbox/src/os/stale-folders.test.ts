import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cleanUpAfter, useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { sweepStaleFolders } from "./stale-folders.js";

async function exitedProcess(): Promise<number> {
  const child = spawn("true");
  await once(child, "exit");
  return child.pid as number;
}

describe("sweepStaleFolders", () => {
  it("removes the folders of processes no longer running, and only those", async () => {
    const prefix = `pleach-stale-test-${process.pid}-${Date.now()}-`;
    const live = cleanUpAfter(spawn("sleep", ["60"]), (child) => child.kill("SIGKILL"));
    await once(live, "spawn");
    const owners = [await exitedProcess(), live.pid as number, process.pid];
    const folders = owners.map((owner) => path.join(os.tmpdir(), `${prefix}${owner}-x`));
    for (const folder of folders) mkdirSync(path.join(folder, "inside"), { recursive: true });
    cleanUpAfter(folders, () => {
      for (const folder of folders) execFileSync("rm", ["-rf", folder]);
    });
    await sweepStaleFolders(prefix);
    expect(folders.map((folder) => existsSync(folder))).toEqual([false, true, true]);
  });
});

describe.skipIf(process.platform !== "linux")("the inotify barrier's folder", () => {
  it("is gone when the process that made it exits", async () => {
    const root = await useTempDir({ prefix: "pleach-barrier-test-" });
    mkdirSync(path.join(root, "a", "b"), { recursive: true });
    const built = path.resolve(fileURLToPath(import.meta.url), "../../../dist/os/index.js");
    // Two scans: the second waits for a barrier, which makes the folder.
    const script = `const { createWorkspaceWalker } = await import(${JSON.stringify(built)});
      const walker = createWorkspaceWalker({ root: process.argv[1], maxDirectories: 100 });
      await walker.scan();
      const scan = await walker.scan();
      console.log(process.pid, scan.tracking);`;
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script, root]);
    const [pid, tracking] = output.toString().trim().split(" ");
    expect(tracking).toBe("events");
    const left = readdirSync(os.tmpdir()).filter((name) =>
      name.startsWith(`pleach-barrier-${pid}-`),
    );
    expect(left).toEqual([]);
  });
});
