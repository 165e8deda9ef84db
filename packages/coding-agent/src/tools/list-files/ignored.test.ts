import { execFileSync } from "node:child_process";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { beforeEach, describe, expect, it } from "vitest";
import { git } from "../../test-support/hostile-inputs.js";
import { createSearchFilesTool, type SearchBackend } from "../search-files/tool.js";
import { createListFilesTool } from "./tool.js";

let root: string;

async function plant(files: Record<string, string>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), content);
  }
}

/** Packages in the generated node_modules, three files each. */
const PACKAGES = 700;

/** The files git tracks in the generated repository. */
const TRACKED = [
  ".gitignore",
  ".ignore",
  "README.md",
  "packages/app/.gitignore",
  "packages/app/src/main.ts",
  "src/index.ts",
  "src/types/api.d.ts",
  "types/global.d.ts",
];
/** Untracked files no ignore file names. */
const UNTRACKED = ["notes/todo.md"];

/**
 * A repository with tracked files, an untracked one, and ignored ones: a large node_modules and a
 * build folder (.gitignore), generated code (a nested .gitignore), a log (.gitignore's `*.log`),
 * a scratch file (.git/info/exclude) and private notes (.ignore, which git does not read).
 */
beforeEach(async () => {
  root = await useTempDir("pleach-ignored-");
  git(root, "init", "-q");
  await plant({
    ".gitignore": "node_modules/\nbuild/\n*.log\n",
    ".ignore": "private-notes.md\n",
    "README.md": "# needle\n",
    "packages/app/.gitignore": "generated/\n",
    "packages/app/src/main.ts": "export const needle = 1;\n",
    "src/index.ts": "export const needle = 2;\n",
    "src/types/api.d.ts": "export declare const needle: number;\n",
    "types/global.d.ts": "declare const needle: string;\n",
  });
  git(root, "add", ".");
  git(root, "commit", "-qm", "base");
  await plant({
    "notes/todo.md": "needle\n",
    "build/bundle.js": "needle\n",
    "debug.log": "needle\n",
    "packages/app/generated/out.ts": "needle\n",
    "scratch.txt": "needle\n",
    "private-notes.md": "needle\n",
  });
  await writeFile(path.join(root, ".git/info/exclude"), "scratch.txt\n");
  for (let start = 0; start < PACKAGES; start += 100) {
    await Promise.all(
      Array.from({ length: 100 }, async (_, offset) => {
        const name = `node_modules/pkg-${start + offset}`;
        await mkdir(path.join(root, name, "lib"), { recursive: true });
        await writeFile(path.join(root, name, "index.js"), "module.exports = 'needle';\n");
        await writeFile(path.join(root, name, "index.d.ts"), "export declare const needle: 1;\n");
        await writeFile(path.join(root, name, "lib/util.js"), "// needle\n");
      }),
    );
  }
});

async function tools(searchBackend: SearchBackend = "auto") {
  const client = await createLocalSandbox({ root, mode: "workspace-write" });
  return {
    list: createListFilesTool(client),
    search: createSearchFilesTool(client, { searchBackend }),
  };
}

/** The folders between `files` and the workspace root. */
function foldersOf(files: string[]): string[] {
  return [
    ...new Set(
      files.flatMap((file) => {
        const parts = file.split("/").slice(0, -1);
        return parts.map((_, index) => parts.slice(0, index + 1).join("/"));
      }),
    ),
  ];
}

const byBytes = (paths: string[]) =>
  [...paths].sort((left, right) => Buffer.compare(Buffer.from(left), Buffer.from(right)));

describe("list_files and search_files on a repository with ignored files", () => {
  it("list only tracked and untracked-but-not-ignored files by default, and everything with includeIgnored", async () => {
    const { list } = await tools();
    const files = [...TRACKED, ...UNTRACKED];
    // git agrees, but for the .ignore file's private-notes.md, which only ripgrep reads.
    const fromGit = execFileSync(
      "git",
      ["ls-files", "--cached", "--others", "--exclude-standard", "-z"],
      { cwd: root, encoding: "utf8" },
    )
      .split("\0")
      .filter((file) => file !== "" && file !== "private-notes.md");
    expect(byBytes(fromGit)).toEqual(byBytes(files));

    const listed = await list.execute({ dir: ".", recursive: true });
    expect(listed.map((entry) => entry.path)).toEqual(byBytes([...files, ...foldersOf(files)]));
    expect(listed.find((entry) => entry.path === "src/index.ts")).toEqual({
      path: "src/index.ts",
      kind: "file",
      size: 25,
    });
    expect(list.toModelOutput(listed).output).not.toContain("node_modules");

    const children = await list.execute({ dir: "." });
    expect(children.map((entry) => entry.path)).toEqual(
      byBytes([".gitignore", ".ignore", "README.md", "notes", "packages", "src", "types"]),
    );

    const declarations = await list.execute({ dir: ".", recursive: true, glob: "**/*.d.ts" });
    expect(declarations.map((entry) => entry.path)).toEqual([
      "src/types/api.d.ts",
      "types/global.d.ts",
    ]);
    expect(
      (await list.execute({ dir: "src", recursive: true, glob: "**/*.d.ts" })).map(
        (entry) => entry.path,
      ),
    ).toEqual(["src/types/api.d.ts"]);
    // A glob with a `/` names paths below dir: it lists them without `recursive`, as a first
    // user passes it (before, it silently found nothing).
    expect(
      (await list.execute({ dir: ".", glob: "**/*.d.ts" })).map((entry) => entry.path),
    ).toEqual(["src/types/api.d.ts", "types/global.d.ts"]);

    const everything = await list.execute({ dir: ".", recursive: true, includeIgnored: true });
    const paths = everything.map((entry) => entry.path);
    expect(paths.filter((entry) => entry.startsWith("node_modules/"))).toHaveLength(PACKAGES * 5);
    for (const ignored of [
      "build/bundle.js",
      "debug.log",
      "packages/app/generated/out.ts",
      "scratch.txt",
      "private-notes.md",
      "node_modules/pkg-0/lib/util.js",
    ]) {
      expect(paths).toContain(ignored);
    }
    expect(paths).not.toContain(".git");
    const allDeclarations = await list.execute({
      dir: ".",
      recursive: true,
      glob: "**/*.d.ts",
      includeIgnored: true,
    });
    expect(allDeclarations).toHaveLength(PACKAGES + 2);
  });

  it("cut an ignoring listing at maxEntries in path order, the same call after call", async () => {
    const { list } = await tools();
    const whole = await list.execute({ dir: ".", recursive: true });
    const cut = await list.execute({ dir: ".", recursive: true, maxEntries: 5 });
    expect(cut.map((entry) => entry.path)).toEqual(whole.slice(0, 5).map((entry) => entry.path));
    expect(cut[4]?.truncatedAfter).toBe(true);
    expect(await list.execute({ dir: ".", recursive: true, maxEntries: 5 })).toEqual(cut);
    const exact = await list.execute({ dir: ".", recursive: true, maxEntries: whole.length });
    expect(exact).toEqual(whole);
  });

  it("search only files no ignore file leaves out by default, and all with includeIgnored", async () => {
    for (const backend of ["rg", "auto"] as const) {
      const { search } = await tools(backend);
      const found = await search.execute({ pattern: "needle", maxMatches: 10_000 });
      expect(found.map((match) => match.path).sort()).toEqual(
        [...TRACKED, ...UNTRACKED]
          .filter((file) => !file.includes(".gitignore") && file !== ".ignore")
          .sort(),
      );
      const declarations = await search.execute({ pattern: "needle", glob: "**/*.d.ts" });
      expect(declarations.map((match) => match.path)).toEqual([
        "src/types/api.d.ts",
        "types/global.d.ts",
      ]);
      const all = await search.execute({
        pattern: "needle",
        includeIgnored: true,
        maxMatches: 10_000,
      });
      expect(all).toHaveLength(PACKAGES * 3 + 11);
    }
    // grep knows no ignore files: it leaves out node_modules only, unless told not to.
    const { search: grep } = await tools("grep");
    const found = await grep.execute({ pattern: "needle", maxMatches: 10_000 });
    expect(found.map((match) => match.path)).toContain("build/bundle.js");
    expect(found.some((match) => match.path.startsWith("node_modules/"))).toBe(false);
    const declarations = await grep.execute({ pattern: "needle", glob: "**/*.d.ts" });
    expect(declarations.map((match) => match.path)).toEqual([
      "src/types/api.d.ts",
      "types/global.d.ts",
    ]);
    const all = await grep.execute({ pattern: "needle", includeIgnored: true, maxMatches: 10_000 });
    expect(all).toHaveLength(PACKAGES * 3 + 11);
  });

  it("honour .gitignore and .ignore in a workspace that is no git repository", async () => {
    await rm(path.join(root, ".git"), { recursive: true });
    const { list, search } = await tools();
    const listed = (await list.execute({ dir: ".", recursive: true }))
      .filter((entry) => entry.kind === "file")
      .map((entry) => entry.path);
    // .git/info/exclude went with .git.
    expect(listed).toEqual(byBytes([...TRACKED, ...UNTRACKED, "scratch.txt"]));
    const found = await search.execute({ pattern: "needle", glob: "*.txt" });
    expect(found.map((match) => match.path)).toEqual(["scratch.txt"]);
  });

  it("without ripgrep, list with find leaving out node_modules only, and say which globs it cannot match", async () => {
    const bin = await useTempDir("pleach-bin-");
    for (const program of ["find", "head", "sort"]) {
      await symlink(
        execFileSync("which", [program], { encoding: "utf8" }).trim(),
        path.join(bin, program),
      );
    }
    const savedPath = process.env.PATH;
    process.env.PATH = bin;
    try {
      const list = createListFilesTool(
        await createLocalSandbox({ root, mode: "danger-full-access" }),
      );
      const paths = (await list.execute({ dir: ".", recursive: true })).map((entry) => entry.path);
      expect(paths).toContain("build/bundle.js");
      expect(paths.some((entry) => entry.startsWith("node_modules"))).toBe(false);
      const declarations = await list.execute({ dir: ".", recursive: true, glob: "**/*.d.ts" });
      expect(declarations.map((entry) => entry.path)).toEqual([
        "src/types/api.d.ts",
        "types/global.d.ts",
      ]);
      await expect(
        list.execute({ dir: ".", recursive: true, glob: "*/types/*.ts" }),
      ).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining("ripgrep is not in the sandbox"),
      });
    } finally {
      process.env.PATH = savedPath;
    }
  });
});
