import { chmod, lstat, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import type { SandboxClient } from "../../sandbox/index.js";
import { createApplyDiffTool } from "./tool.js";

/**
 * Every entry under `root`: a file's mode and bytes, a folder's mode. The placeholders the OS
 * sandbox leaves for protected paths while it runs a command are not the patch's and not listed.
 */
async function snapshot(root: string, prefix = ""): Promise<Record<string, string>> {
  const tree: Record<string, string> = {};
  for (const entry of await readdir(path.join(root, prefix))) {
    const name = prefix === "" ? entry : `${prefix}/${entry}`;
    const info = await lstat(path.join(root, name));
    const mode = (info.mode & 0o7777).toString(8);
    if (info.isDirectory()) {
      if ((await readdir(path.join(root, name))).includes(".pleach-placeholder")) continue;
      tree[`${name}/`] = mode;
      Object.assign(tree, await snapshot(root, name));
    } else {
      tree[name] = `${mode} ${(await readFile(path.join(root, name))).toString("base64")}`;
    }
  }
  return tree;
}

const patch = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch", ""].join("\n");

/** A file the model is told to delete: executable, CRLF, with a byte order mark. */
const SCRIPT = "\uFEFF#!/bin/sh\r\necho kept\r\n";

/** A workspace with a.txt (executable), b.txt, dup.txt, from/f.txt, to/f.txt and a .git folder. */
async function workspace(mode: "workspace-write" | "danger-full-access" = "workspace-write") {
  const root = await useTempDir("pleach-write-all-");
  await writeFile(path.join(root, "a.txt"), SCRIPT);
  await chmod(path.join(root, "a.txt"), 0o755);
  await writeFile(path.join(root, "b.txt"), "one\ntwo\nthree\n");
  await writeFile(path.join(root, "dup.txt"), "previous\r\n");
  await mkdir(path.join(root, "from"));
  await mkdir(path.join(root, "to"));
  await writeFile(path.join(root, "from/f.txt"), "before\n");
  await writeFile(path.join(root, "to/f.txt"), "in the way\n");
  await mkdir(path.join(root, ".git/hooks"), { recursive: true });
  await writeFile(path.join(root, ".git/hooks/pre-push"), "#!/bin/sh\n");
  const client = await createLocalSandbox({ root, mode });
  return { root, client, before: await snapshot(root) };
}

async function refusal(client: SandboxClient, diff: string) {
  return createApplyDiffTool(client)
    .execute({ path: ".", diff }, {})
    .then(
      (output) => ({ code: "none", message: JSON.stringify(output) }),
      (error: { code: string; message: string }) => ({ code: error.code, message: error.message }),
    );
}

/** A write the sandbox refuses (a protected path), after the sections before it were done. */
const PROTECTED = ["*** Add File: .git/hooks/pre-commit", "+#!/bin/sh"];

describe("apply_diff writes every file of a patch or none", () => {
  it.each([
    {
      name: "a delete, then an update whose context does not match",
      diff: patch("*** Delete File: a.txt", "*** Update File: b.txt", "@@", " nope", "-two", "+2"),
      code: "none",
    },
    {
      name: "a delete, then a write the sandbox refuses",
      diff: patch("*** Delete File: a.txt", ...PROTECTED),
      code: "PROTECTED_PATH",
    },
    {
      name: "an added file over an existing one, then a refused write",
      diff: patch("*** Add File: dup.txt", "+replacement", ...PROTECTED),
      code: "PROTECTED_PATH",
    },
    {
      name: "a move onto an existing file, then a refused write",
      diff: patch(
        "*** Update File: from/f.txt",
        "*** Move to: to/f.txt",
        "@@",
        "-before",
        "+after",
        ...PROTECTED,
      ),
      code: "PROTECTED_PATH",
    },
    {
      name: "updates and a file in new folders written, then a refused write",
      diff: patch(
        "*** Update File: b.txt",
        "@@",
        "-two",
        "+2",
        "*** Update File: dup.txt",
        "@@",
        "-previous",
        "+next",
        "*** Add File: new/deeper/c.txt",
        "+c",
        "*** Delete File: a.txt",
        ...PROTECTED,
      ),
      code: "PROTECTED_PATH",
    },
    {
      name: "a delete, then a delete the sandbox refuses",
      diff: patch("*** Delete File: a.txt", "*** Delete File: .git/hooks/pre-push"),
      code: "COMMAND_FAILED",
    },
  ])("$name leaves the workspace as it was", async ({ diff, code }) => {
    const { root, client, before } = await workspace();
    const outcome = await refusal(client, diff);
    expect(outcome.code).toBe(code);
    if (code !== "none") {
      expect(outcome.message).toMatch(
        /\. Nothing was changed: apply_diff writes every file of a patch or none, and put back what it had already changed\.$/,
      );
    }
    expect(await snapshot(root)).toEqual(before);
  });

  it("a unified diff of several files too", async () => {
    const { root, client, before } = await workspace();
    const diff = [
      "--- a/b.txt",
      "+++ b/b.txt",
      "@@ -1,3 +1,3 @@",
      " one",
      "-two",
      "+2",
      " three",
      "--- a/a.txt",
      "+++ /dev/null",
      "@@ -1,2 +0,0 @@",
      "-\uFEFF#!/bin/sh\r",
      "-echo kept\r",
      "--- /dev/null",
      "+++ b/.git/hooks/pre-commit",
      "@@ -0,0 +1 @@",
      "+#!/bin/sh",
      "",
    ].join("\n");
    expect((await refusal(client, diff)).code).toBe("PROTECTED_PATH");
    expect(await snapshot(root)).toEqual(before);
  });

  it("a client that fails midway: its error, in pleach's words, and the files put back", async () => {
    const { root, client, before } = await workspace("danger-full-access");
    let writes = 0;
    const flaky: SandboxClient = {
      exec: (command, options) => client.exec(command, options),
      readFile: (file, options) => client.readFile(file, options),
      async writeFile(file, content, options) {
        writes += 1;
        if (writes === 3) throw new Error("connection reset");
        return client.writeFile(file, content, options);
      },
    };
    const diff = patch(
      "*** Delete File: a.txt",
      "*** Update File: b.txt",
      "@@",
      "-two",
      "+2",
      "*** Add File: dup.txt",
      "+replacement",
      "*** Add File: fresh/new.txt",
      "+new",
    );
    expect(await refusal(flaky, diff)).toEqual({
      code: "INTERNAL",
      message:
        "connection reset. Nothing was changed: apply_diff writes every file of a patch or none, and put back what it had already changed.",
    });
    expect(await snapshot(root)).toEqual(before);
  });

  it("a patch that applies leaves no copy of what it deleted or replaced", async () => {
    const { root, client, before } = await workspace();
    const diff = patch(
      "*** Delete File: a.txt",
      "*** Update File: from/f.txt",
      "*** Move to: to/f.txt",
      "@@",
      "-before",
      "+after",
    );
    expect((await refusal(client, diff)).code).toBe("none");
    const after = { ...before };
    delete after["a.txt"];
    delete after["from/f.txt"];
    after["to/f.txt"] = `644 ${Buffer.from("after\n").toString("base64")}`;
    expect(await snapshot(root)).toEqual(after);
  });
});
