// Commands see the workspace as it is: in an express checkout (the package from node_modules, made
// a repository) and a click-shaped one, `ls -A`, `find .` and `git status --porcelain` inside the
// sandbox list exactly what they list on the host, one-off and in a session; `go build` works in
// a folder that is no repository.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();
const goMissing =
  spawnSync("go", ["version"], { stdio: "ignore" }).status === 0 ? undefined : "no go here";

const LISTINGS = {
  "ls -A": "ls -A",
  "find .": "find . -path ./.git -prune -o -print | LC_ALL=C sort",
  "git status --porcelain": "git status --porcelain --untracked-files=all",
};

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "user.name=u", "-c", "user.email=u@example.invalid", ...args], {
    cwd,
    stdio: "ignore",
  });
}

/** The host's own listing of `root`. */
function onHost(root: string, command: string): string {
  return execFileSync("/bin/bash", ["-c", command], { cwd: root, encoding: "utf8" });
}

/** Commit what is there, then change a file and add one, so that `git status` has lines. */
function asCheckout(root: string, changed: string): void {
  git(root, "init", "-q");
  git(root, "add", "-A");
  git(root, "commit", "-qm", "checkout");
  execFileSync("/bin/bash", ["-c", `echo changed >> '${changed}' && echo new > untracked.txt`], {
    cwd: root,
  });
}

/** express as npm installs it, made a repository. */
async function express(): Promise<string> {
  const root = await useTempDir("pleach-view-express-");
  const from = path.dirname(createRequire(import.meta.url).resolve("express/package.json"));
  cpSync(from, root, { recursive: true, dereference: false });
  await writeFile(path.join(root, ".gitignore"), "node_modules/\n");
  await mkdir(path.join(root, ".github", "workflows"), { recursive: true });
  await writeFile(path.join(root, ".github", "workflows", "ci.yml"), "on: push\n");
  await writeFile(path.join(root, ".editorconfig"), "root = true\n");
  asCheckout(root, "index.js");
  return root;
}

/** A checkout shaped as pallets/click's: its top-level layout, with a pre-commit config. */
async function click(): Promise<string> {
  const root = await useTempDir("pleach-view-click-");
  const files: Record<string, string> = {
    ".devcontainer/devcontainer.json": "{}\n",
    ".editorconfig": "root = true\n",
    ".github/workflows/tests.yaml": "on: push\n",
    ".gitignore": ".venv/\n__pycache__/\n",
    ".pre-commit-config.yaml": "repos: []\n",
    ".readthedocs.yaml": "version: 2\n",
    "CHANGES.rst": "Version 8.2\n",
    "LICENSE.txt": "BSD-3-Clause\n",
    "README.md": "# click\n",
    "docs/index.rst": "click\n",
    "examples/repo/repo.py": "import click\n",
    "pyproject.toml": '[project]\nname = "click"\n',
    "src/click/__init__.py": "from .core import Command\n",
    "src/click/core.py": "class Command:\n    pass\n",
    "tests/test_basic.py": "def test_basic():\n    pass\n",
  };
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), content);
  }
  asCheckout(root, "src/click/core.py");
  return root;
}

describe.skipIf(skipReason !== undefined)(
  `what commands see of the workspace ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    for (const [name, make] of [
      ["express", express],
      ["click", click],
    ] as const) {
      for (const session of [false, true]) {
        it(`${name}: ls -A, find . and git status --porcelain list what the host lists${session ? ", in a session" : ""}`, async () => {
          const root = await make();
          const client = await createLocalSandbox({ root, mode: "workspace-write", session });
          try {
            for (const [label, command] of Object.entries(LISTINGS)) {
              const host = onHost(root, command);
              const inside = await client.exec(command);
              expect(inside.exitCode, label).toBe(0);
              expect(inside.stdout, label).toBe(host);
              // And the host's listing is the same while the sandbox is up.
              expect(onHost(root, command), label).toBe(host);
            }
          } finally {
            await client.close();
          }
        });
      }
    }

    it.skipIf(goMissing !== undefined)(
      `go build works in a folder that is no repository${goMissing === undefined ? "" : ` (skipped: ${goMissing})`}`,
      async () => {
        const root = await useTempDir("pleach-view-go-");
        await writeFile(path.join(root, "go.mod"), "module example.com/hello\n\ngo 1.19\n");
        await writeFile(
          path.join(root, "main.go"),
          'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n',
        );
        const client = await createLocalSandbox({ root, mode: "workspace-write" });
        try {
          const built = await client.exec("go build -o hello . && ./hello", { timeoutMs: 120_000 });
          expect(built.stderr).toBe("");
          expect(built.stdout).toBe("hello\n");
        } finally {
          await client.close();
        }
      },
      180_000,
    );
  },
);
