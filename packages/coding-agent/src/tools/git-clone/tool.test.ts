import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findPwned, git, HOSTILE_INPUTS } from "../../test-support/hostile-inputs.js";
import { createGitCloneTool, repositoryName } from "./tool.js";

let root: string;
let origin: string;

/** A repository outside the workspace with two commits on `main` and a branch `feature`. */
async function makeOrigin(): Promise<string> {
  const dir = await useTempDir("pleach-origin-");
  const repo = path.join(dir, "origin-repo");
  await mkdir(repo);
  git(repo, "init", "-q");
  await writeFile(path.join(repo, "a.txt"), "one\n");
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "first");
  await writeFile(path.join(repo, "a.txt"), "two\n");
  git(repo, "commit", "-qam", "second");
  git(repo, "branch", "feature", "HEAD~1");
  return repo;
}

beforeEach(async () => {
  root = await useTempDir("pleach-clone-");
  origin = await makeOrigin();
});
afterEach(async () => {
  expect(await findPwned(root)).toEqual([]);
  expect(await findPwned(path.dirname(origin))).toEqual([]);
});

async function cloneTool() {
  return createGitCloneTool(await createLocalSandbox({ root, mode: "danger-full-access" }));
}

const head = (repo: string, ref = "HEAD") => git(repo, "rev-parse", ref).trim();

describe("git_clone", () => {
  it("clones a local path into the repository's name and reports commit and branch", async () => {
    const tool = await cloneTool();
    const output = await tool.execute({ url: origin });
    expect(output).toEqual({ commitSha: head(origin), branch: "main", path: "origin-repo" });
    expect(await readFile(path.join(root, "origin-repo", "a.txt"), "utf8")).toBe("two\n");
    expect(tool.toModelOutput(output).output).toBe(
      `Cloned into origin-repo at ${head(origin)} (branch main).`,
    );
  });

  it("clones a file:// URL with --depth and --branch into a nested dest", async () => {
    const tool = await cloneTool();
    const output = await tool.execute({
      url: `file://${origin}/`,
      dest: "vendor/libs/feature-copy",
      depth: 1,
      branch: "feature",
    });
    expect(output).toEqual({
      commitSha: head(origin, "feature"),
      branch: "feature",
      path: "vendor/libs/feature-copy",
    });
    const clone = path.join(root, "vendor/libs/feature-copy");
    expect(git(clone, "rev-list", "--count", "HEAD").trim()).toBe("1");
    expect(await readFile(path.join(clone, "a.txt"), "utf8")).toBe("one\n");
  });

  it("resolves a relative local path from the workspace root", async () => {
    git(root, "init", "-q", "inner.git", "--bare");
    git(origin, "push", "-q", path.join(root, "inner.git"), "main:main");
    const tool = await cloneTool();
    await expect(tool.execute({ url: "inner.git", dest: "deep/er/copy" })).resolves.toMatchObject({
      commitSha: head(origin),
      path: "deep/er/copy",
    });
  });

  it("throws COMMAND_FAILED with git's message on a non-zero exit", async () => {
    const tool = await cloneTool();
    const missing = tool.execute({ url: path.join(origin, "nope") });
    await expect(missing).rejects.toMatchObject({ code: "COMMAND_FAILED" });
    await expect(missing).rejects.toThrow(/does not exist/);
    await tool.execute({ url: origin });
    await expect(tool.execute({ url: origin })).rejects.toThrow(
      /already exists and is not an empty directory/,
    );
    await expect(tool.execute({ url: origin, dest: "x", branch: "no-such" })).rejects.toThrow(
      /no-such not found/,
    );
  });

  it("says the sandbox's /tmp is private when a repository under /tmp does not exist for it", async () => {
    // The origin is under the host's /tmp; sandboxed commands get a /tmp of their own.
    expect(origin.startsWith("/tmp/")).toBe(true);
    const tool = createGitCloneTool(await createLocalSandbox({ root, mode: "workspace-write" }));
    for (const url of [origin, `file://${origin}`]) {
      await expect(tool.execute({ url, dest: "copy" })).rejects.toMatchObject({
        code: "COMMAND_FAILED",
        message: expect.stringContaining(
          "Sandboxed commands see a private, empty /tmp of their own",
        ),
      });
    }
    // A missing repository elsewhere is just missing.
    const elsewhere = tool.execute({ url: "/var/empty/no-such-repository", dest: "copy" });
    await expect(elsewhere).rejects.toMatchObject({ code: "COMMAND_FAILED" });
    await expect(elsewhere).rejects.not.toMatchObject({ message: expect.stringContaining("/tmp") });
  });

  it("says how to turn the network on when a host cannot be resolved", async () => {
    const tool = createGitCloneTool(await createLocalSandbox({ root, mode: "workspace-write" }));
    // `.invalid` never resolves, network or not.
    const error = await tool
      .execute({ url: "https://example.invalid/owner/repo.git", timeout: 60_000 })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "COMMAND_FAILED" });
    expect(String((error as Error).message)).toMatch(/Could not resolve host/);
    expect(String((error as Error).message)).toContain("`--network`");
    expect(String((error as Error).message)).toContain("`network: true`");
  });

  it("names the network off, not a larger timeout, for a clone killed at its limit while it is off", async () => {
    const sandbox = await createLocalSandbox({ root, mode: "workspace-write" });
    // The clone stands in for one that retries name lookups until it is killed, as a real one
    // through a slow resolver would.
    const tool = createGitCloneTool({
      ...sandbox,
      exec: (command, options) =>
        command.includes(" clone ")
          ? sandbox.exec(
              `node -e "setInterval(() => require('dns').lookup('github.com', () => {}), 100)"`,
              { ...options, timeoutMs: 1_500 },
            )
          : sandbox.exec(command, options),
    });
    const error = await tool
      .execute({ url: "https://github.com/owner/repo.git" })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "TIMEOUT" });
    const [first, note] = String((error as Error).message).split("\n");
    expect(first).toMatch(
      /^git clone ran past \d+ ms and was stopped, with the network off for commands here: a larger timeout will not help a clone that needs it\.$/,
    );
    expect(note).toMatch(/^\[sandbox: the network is off for commands here: .*`--network`/);
  });

  it("reports an empty repository, whose HEAD does not resolve", async () => {
    const dir = await useTempDir("pleach-empty-");
    git(dir, "init", "-q", "--bare", "empty.git");
    const tool = await cloneTool();
    await expect(tool.execute({ url: path.join(dir, "empty.git") })).rejects.toMatchObject({
      code: "COMMAND_FAILED",
      message: expect.stringContaining("an empty repository has no commits"),
    });
  });

  it("refuses option-like URLs and command-running transports", async () => {
    const tool = await cloneTool();
    await expect(tool.execute({ url: "-uhttps://x" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await expect(tool.execute({ url: "--upload-pack=touch pwned" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    for (const url of ["ext::sh -c touch% pwned", "fd::3", "EXT::sh -c id", "x-helper::foo"]) {
      await expect(tool.execute({ url, dest: "d" })).rejects.toMatchObject({
        code: "UNSUPPORTED",
      });
    }
  });

  it("runs no hostile url, branch or dest", async () => {
    const tool = await cloneTool();
    for (const hostile of HOSTILE_INPUTS) {
      await expect(tool.execute({ url: hostile, dest: "d" })).rejects.toMatchObject({
        name: "ToolError",
      });
      await expect(tool.execute({ url: origin, dest: "d", branch: hostile })).rejects.toMatchObject(
        { name: "ToolError" },
      );
    }
    // A hostile-looking dest is just a folder name.
    const dest = "$(touch pwned) `id`; x";
    await expect(tool.execute({ url: origin, dest })).resolves.toMatchObject({ path: dest });
    await expect(tool.execute({ url: origin, dest: "-rf" })).resolves.toMatchObject({
      path: "-rf",
    });
  });

  it("keeps dest inside the workspace", async () => {
    const tool = await cloneTool();
    await expect(tool.execute({ url: origin, dest: "../out" })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ url: origin, dest: "/tmp/x" })).rejects.toMatchObject({
      code: "INVALID_PATH",
    });
    await expect(tool.execute({ url: origin, dest: ".git/x" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    const outside = await useTempDir("pleach-outside-");
    await symlink(outside, path.join(root, "out"));
    await expect(tool.execute({ url: origin, dest: "out" })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await expect(tool.execute({ url: origin, dest: "out/deeper/x" })).rejects.toMatchObject({
      code: "PATH_ESCAPE",
    });
    await writeFile(path.join(root, "file"), "");
    await expect(tool.execute({ url: origin, dest: "file" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await expect(tool.execute({ url: origin, dest: "file/x" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("goes through a file"),
    });
  });
});

describe("repositoryName", () => {
  it("takes the last segment without .git or trailing slashes, as git does", () => {
    expect(repositoryName("https://github.com/owner/repo.git")).toBe("repo");
    expect(repositoryName("https://github.com/owner/repo/")).toBe("repo");
    expect(repositoryName("git@github.com:owner/repo.git")).toBe("repo");
    expect(repositoryName("git@host:repo.git")).toBe("repo");
    expect(repositoryName("file:///srv/git/project.git//")).toBe("project");
    expect(repositoryName("/srv/work/project/.git")).toBe("project");
    expect(() => repositoryName("..")).toThrow(/Pass dest/);
  });
});
