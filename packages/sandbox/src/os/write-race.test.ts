import { execFileSync } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { isToolError } from "@pleach/core";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { MAX_PATH_COMPONENTS } from "../workspace-root.js";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

// Writes that make folders, raced by a command, and paths built to make the walk slow.

const skipReason = await attackSuiteSkipReason();
let root: string;

async function workspace(): Promise<string> {
  root = await useTempDir({ prefix: "pleach-write-race-" });
  execFileSync("git", ["init", "-q", root]);
  return root;
}

/** Every entry below `folder`, sorted. */
function entries(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" }).sort();
}

describe.skipIf(skipReason !== undefined)(
  `writes that make folders ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    // With git writes too: commands may then write in .git, the file tools still may not.
    for (const allowGitWrites of [false, true]) {
      it(`make no folder in .git while a command swaps a folder on the way with a link to it${allowGitWrites ? ", with git writes" : ""}`, async () => {
        await workspace();
        const before = entries(path.join(root, ".git"));
        const client = await createLocalSandbox({
          root,
          commandWrapper: createCommandWrapper({ warmSandbox: false, allowGitWrites }),
        });
        // The command swaps x (a folder) and y (a link to .git) atomically, as fast as it can.
        const flipper = client.exec(
          [
            "mkdir x && ln -s .git y && exec /usr/bin/python3 -c '",
            "import ctypes, os",
            "libc = ctypes.CDLL(None, use_errno=True)",
            "n = 0",
            'while not os.path.exists("STOP"):',
            '    for _ in range(500): libc.renameat2(-100, b"x", -100, b"y", 2); n += 1',
            "print(n)'",
          ].join("\n"),
          { timeoutMs: 60_000 },
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
        const outcomes: Record<string, number> = {};
        for (let index = 0; index < 600; index += 1) {
          const code = await client.writeFile(`x/made-${index}/f.txt`, "x").then(
            () => "ok",
            (error: unknown) => (isToolError(error) ? error.code : String(error)),
          );
          outcomes[code] = (outcomes[code] ?? 0) + 1;
        }
        await writeFile(path.join(root, "STOP"), "");
        const flips = Number((await flipper).stdout.trim());
        console.log(`flips ${flips}, writes ${JSON.stringify(outcomes)}`);
        expect(flips).toBeGreaterThan(1_000);
        expect(outcomes.PROTECTED_PATH).toBeGreaterThan(0);
        expect(Object.keys(outcomes).filter((code) => code === "INTERNAL")).toEqual([]);
        expect(entries(path.join(root, ".git"))).toEqual(before);
      }, 120_000);
    }
  },
);

describe(`deep paths ${runningAs()}`, () => {
  it("refuse protection, rather than go blind, below a folder too deep to name by path", async () => {
    await workspace();
    // 30 folders of 200 characters: 6,000 bytes, past PATH_MAX, made one chdir at a time.
    execFileSync("/usr/bin/python3", [
      "-c",
      "import os, sys\nos.chdir(sys.argv[1])\nfor _ in range(30):\n    os.mkdir('d' * 200); os.chdir('d' * 200)\nos.mkdir('.git')",
      root,
    ]);
    const client = await createLocalSandbox({
      root,
      commandWrapper: createCommandWrapper({ backend: "none" }),
    });
    await expect(client.writeFile("src/new.txt", "x")).rejects.toMatchObject({
      code: "TOO_LARGE",
      message: expect.stringContaining("deeper than a path can name"),
    });
    // Reading needs no protection.
    await writeFile(path.join(root, "README.md"), "hi\n");
    expect(await client.readFile("README.md")).toBe("hi\n");
    execFileSync("rm", ["-rf", path.join(root, "d".repeat(200))]);
    await client.writeFile("src/new.txt", "x");
  });

  it(`refuse more than ${MAX_PATH_COMPONENTS} parts, links followed, and hold one descriptor`, async () => {
    await workspace();
    const client = await createLocalSandbox({
      root,
      commandWrapper: createCommandWrapper({ backend: "none" }),
    });
    const deep = Array(MAX_PATH_COMPONENTS + 1)
      .fill("a")
      .join("/");
    await expect(client.writeFile(`${deep}/f.txt`, "x")).rejects.toMatchObject({
      code: "INVALID_PATH",
    });
    await expect(client.readFile(`${deep}/f.txt`)).rejects.toMatchObject({ code: "INVALID_PATH" });
    // A short path that links expand past the limit.
    const chain = Array(600).fill("a").join("/");
    await mkdir(path.join(root, chain), { recursive: true });
    execFileSync("ln", ["-s", chain, path.join(root, chain, "back")]);
    await expect(client.readFile(`${chain}/back/x`)).rejects.toMatchObject({
      code: "INVALID_PATH",
    });
    // Within the limit it works, with no descriptor left open.
    const fds = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(root);
        } catch {
          return false;
        }
      });
    await client.writeFile(`${chain}/f.txt`, "deep\n");
    expect(await client.readFile(`${chain}/f.txt`)).toBe("deep\n");
    expect(fds()).toEqual([]);
  }, 60_000);
});
