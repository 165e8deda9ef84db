import { constants } from "node:fs";
import { access, cp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { git } from "./git.js";
import type { EvalInstance } from "./instances.js";

/** The bundled mini dataset's sources, committed beside the package. */
function miniDatasetSourcePath(): string {
  return fileURLToPath(new URL("../../assets/eval-mini/", import.meta.url));
}

/**
 * A folder for repositories the sandbox must see. The sandbox has a private `/tmp`, so on hosts
 * where `os.tmpdir()` is `/tmp`, `/var/tmp` is used when writable.
 */
export async function sandboxVisibleTempParent(): Promise<string> {
  const temp = os.tmpdir();
  if (path.resolve(temp) !== "/tmp") return temp;
  try {
    await access("/var/tmp", constants.W_OK);
    return "/var/tmp";
  } catch {
    return temp;
  }
}

/**
 * Build the mini dataset into `directory`: one git repository per instance, made from the
 * committed sources (a base commit with the bug, then a later commit with the fix, so a harness
 * that forgets to check out `base_commit` is caught), and `instances.jsonl` naming them by
 * `file://` URL. Returns the path of `instances.jsonl`.
 */
export async function buildMiniDataset({ directory }: { directory: string }): Promise<string> {
  const source = miniDatasetSourcePath();
  const reposDirectory = path.join(directory, "repos");
  await mkdir(reposDirectory, { recursive: true });
  const lines: string[] = [];
  const names = (await readdir(source, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  for (const name of names) {
    const instanceSource = path.join(source, name);
    const meta = JSON.parse(await readFile(path.join(instanceSource, "instance.json"), "utf8"));
    const goldPatch = await readFile(path.join(instanceSource, "gold.patch"), "utf8");
    const testPatch = await readFile(path.join(instanceSource, "test.patch"), "utf8");
    const repo = path.join(reposDirectory, name);
    await rm(repo, { recursive: true, force: true });
    await cp(path.join(instanceSource, "base"), repo, { recursive: true });
    await git(["init", "--quiet", "--initial-branch=main"], { cwd: repo });
    await git(["add", "--all"], { cwd: repo });
    await git(["commit", "--quiet", "--message", "Initial version"], {
      cwd: repo,
      date: "2026-01-01T00:00:00Z",
    });
    const baseCommit = await git(["rev-parse", "HEAD"], { cwd: repo });
    await writeFile(path.join(directory, `${name}.gold.patch`), goldPatch);
    await git(["apply", path.join(directory, `${name}.gold.patch`)], { cwd: repo });
    await rm(path.join(directory, `${name}.gold.patch`));
    await git(["commit", "--quiet", "--all", "--message", `Fix: ${name}`], {
      cwd: repo,
      date: "2026-01-02T00:00:00Z",
    });
    const instance: EvalInstance = {
      instance_id: `pleach-mini__${name}`,
      repo: pathToFileURL(repo).href,
      base_commit: baseCommit,
      problem_statement: meta.problem_statement,
      patch: goldPatch,
      test_patch: testPatch,
      FAIL_TO_PASS: meta.FAIL_TO_PASS,
      PASS_TO_PASS: meta.PASS_TO_PASS,
      test_command: meta.test_command,
    };
    lines.push(JSON.stringify(instance));
  }
  const file = path.join(directory, "instances.jsonl");
  await writeFile(file, `${lines.join("\n")}\n`);
  return file;
}
