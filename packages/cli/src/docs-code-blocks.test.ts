// Every fenced code block of the docs (README.md, docs/*.md, bench/README.md, packages/*/README.md)
// is checked by its language, so a documented export, flag or tool cannot disappear unnoticed:
// ts blocks are type-checked against the packages (imported by their names, resolved to their
// sources), sh blocks are parsed by bash and every pleach command in them is held to the command's
// options, json and toml blocks are parsed (and a pleach command in an MCP client's configuration
// held to its options too). A block that cannot be checked says why, in a comment before it:
//
//   <!-- not-run: the reason -->
//
// A ts block that leaves names to the reader (the model, the user's own module) declares them:
//
//   <!-- declare: model: import("ai").LanguageModel; prompt: string -->
//
// Its imports of relative modules (`./my-client.js`, the reader's own) are left out, and what
// they import must be declared. A ts block for another major version of a package than the one
// installed under its name (`ai@7` beside `ai@6`) names the alias it is installed as, in a comment
// of its own before the others, and is checked with that package in its place (in the block, its
// declarations and the pleach sources it imports):
//
//   <!-- packages: ai=ai-v7 -->
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CODING_AGENT_TOOL_NAMES } from "@pleach/coding-agent/tools";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "./main.js";

const repo = path.resolve(import.meta.dirname, "../../..");
const PACKAGES = ["core", "coding-agent", "sandbox", "cli"];
/** Blocks that say why they are not checked; a new one is a deliberate change of this number. */
const NOT_RUN_BLOCKS = 3;

interface Block {
  file: string;
  line: number;
  lang: string;
  code: string;
  notRun?: string;
  declare?: string;
  /** Package names the block's imports resolve to another installed package: `ai` → `ai-v7`. */
  packages?: Record<string, string>;
}

function docFiles(): string[] {
  const docs = readdirSync(path.join(repo, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  return [
    "README.md",
    "bench/README.md",
    ...docs,
    ...PACKAGES.map((name) => `packages/${name}/README.md`),
  ];
}

/** The fenced blocks of one Markdown file, each with the comment that precedes it, if any. */
function blocksOf(file: string): Block[] {
  const lines = readFileSync(path.join(repo, file), "utf8").split("\n");
  const blocks: Block[] = [];
  let comments: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? "";
    const fence = /^```(\S*)\s*$/.exec(line);
    if (fence) {
      const start = index;
      const body: string[] = [];
      while (++index < lines.length && lines[index] !== "```") body.push(lines[index] ?? "");
      const block: Block = { file, line: start + 1, lang: fence[1] ?? "", code: body.join("\n") };
      const said = (key: string) =>
        comments
          .map((comment) => new RegExp(`^<!-- ${key}: (.+) -->$`).exec(comment)?.[1])
          .find((value) => value !== undefined);
      const notRun = said("not-run");
      const declare = said("declare");
      const packages = said("packages");
      if (notRun) block.notRun = notRun;
      if (declare) block.declare = declare;
      if (packages) {
        block.packages = Object.fromEntries(
          packages.split(/\s+/).map((pair) => pair.split("=") as [string, string]),
        );
      }
      blocks.push(block);
      comments = [];
    } else if (/^<!-- .* -->$/.test(line)) comments.push(line);
    else if (line.trim() !== "") comments = [];
  }
  return blocks;
}

const blocks = docFiles()
  .filter((file) => existsSync(path.join(repo, file)))
  .flatMap(blocksOf);
const where = (block: Block) => `${block.file}:${block.line}`;
const checked = (lang: string) => blocks.filter((block) => block.lang === lang && !block.notRun);

/** Shell words of a command line, quotes removed; `|`, `&&`, `||`, `;` and `&` as words of their own. */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const char = text[index] ?? "";
    if (char === "'" || char === '"') {
      const end = text.indexOf(char, index + 1);
      word = (word ?? "") + text.slice(index + 1, end);
      index = end;
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if ("|&;".includes(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
      const double = text.slice(index, index + 2);
      words.push(double === "&&" || double === "||" ? double : char);
      if (double === "&&" || double === "||") index++;
    } else word = (word ?? "") + char;
  }
  if (word !== undefined) words.push(word);
  return words;
}

const isPleach = (word: string) =>
  word === "pleach" || word === "@pleach/cli" || word.endsWith("/bin/pleach.js");

/** What is wrong with each pleach command in these words (the program at a command's start). */
function pleachProblems(words: string[]): string[] {
  const problems: string[] = [];
  let start = true;
  for (let index = 0; index < words.length; index++) {
    const word = words[index] ?? "";
    if (["|", "&&", "||", ";", "&", "--"].includes(word)) {
      start = true;
      continue;
    }
    if (!start) continue;
    if (/^[A-Z_]+=/.test(word) || word === "npx" || word === "-y" || word === "node") continue;
    start = false;
    if (!isPleach(word)) continue;
    let end = index + 1;
    while (end < words.length && !["|", "&&", "||", ";", "&"].includes(words[end] ?? "")) end++;
    problems.push(...commandProblems(words.slice(index + 1, end)));
    index = end - 1;
  }
  return problems;
}

function commandProblems(args: string[]): string[] {
  const [name = "", ...rest] = args;
  const command = COMMANDS[name];
  if (command === undefined) return [`pleach ${name}: no such command`];
  if (name === "sandbox" && rest[0] !== "serve")
    return [`pleach sandbox ${rest[0]}: no such command`];
  const problems: string[] = [];
  const shorts = new Set(Object.values(command.options).map(({ short }) => short));
  for (const arg of rest) {
    const flag = /^--([\w-]+)/.exec(arg)?.[1];
    if (flag !== undefined && !(flag in command.options))
      problems.push(`pleach ${name} has no --${flag}`);
    const short = /^-(\w)$/.exec(arg)?.[1];
    if (short !== undefined && !shorts.has(short)) problems.push(`pleach ${name} has no -${short}`);
  }
  if (name === "call") {
    const [tool = "", input] = rest;
    if (!(CODING_AGENT_TOOL_NAMES as readonly string[]).includes(tool))
      problems.push(`pleach call: no tool ${tool}`);
    if (input !== undefined && !input.startsWith("-")) {
      try {
        JSON.parse(input);
      } catch (error) {
        problems.push(`pleach call ${tool}: its input is not JSON (${(error as Error).message})`);
      }
    }
  }
  return problems;
}

/** The pleach commands an MCP client's configuration starts: `{ command, args }` at any depth. */
function configuredCommands(value: unknown): string[][] {
  if (typeof value !== "object" || value === null) return [];
  const entry = value as { command?: unknown; args?: unknown };
  const own =
    typeof entry.command === "string" && Array.isArray(entry.args)
      ? [[entry.command, ...entry.args.map(String)]]
      : [];
  return [...own, ...Object.values(value).flatMap(configuredCommands)];
}

/**
 * The type declarations of the installed package `name`, from the repository's root (a path
 * substitution of ES module resolution names a file, not a package folder).
 */
function typesOf(name: string): string {
  const folder = `node_modules/${name}`;
  const manifest = JSON.parse(readFileSync(path.join(repo, folder, "package.json"), "utf8"));
  const types: string | undefined = manifest.exports?.["."]?.types ?? manifest.types;
  if (types === undefined) throw new Error(`${folder}/package.json names no types`);
  return path.posix.join(folder, types);
}

/**
 * The type errors of ts blocks that share their package substitutions (`packages`), each at its
 * Markdown file and line.
 */
function typeCheck(group: readonly Block[]): string[] {
  const files = new Map<string, Block & { text: string }>();
  for (const block of group) {
    const declared = (block.declare ?? "")
      .split(";")
      .map((part) => part.trim())
      .filter((part) => part !== "")
      .map((part) => `declare const ${part};`);
    const code = block.code
      .split("\n")
      .filter((line) => !/^import .* from "\.\.?\/.*";$/.test(line))
      .join("\n");
    // Declarations first, on one line, so a diagnostic's line is the block's line.
    files.set(path.join(repo, `.docs-block-${blocks.indexOf(block)}.mts`), {
      ...block,
      text: `${declared.join(" ")}\n${code}\nexport {};\n`,
    });
  }
  const substitutes = Object.entries(group[0]?.packages ?? {});
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2023.d.ts"],
    types: ["node"],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    customConditions: ["@pleach/source"],
    ...(substitutes.length === 0
      ? {}
      : {
          baseUrl: repo,
          paths: Object.fromEntries(substitutes.map(([name, alias]) => [name, [typesOf(alias)]])),
        }),
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  host.readFile = (name) => files.get(name)?.text ?? readFile.call(host, name);
  host.getSourceFile = (name, version, ...rest) => {
    const text = files.get(name)?.text;
    return text === undefined
      ? getSourceFile.call(host, name, version, ...rest)
      : ts.createSourceFile(name, text, version);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return [...files].flatMap(([name, block]) => {
    const source = program.getSourceFile(name);
    if (source === undefined) return [`${name} was not read`];
    return [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ].map((diagnostic) => {
      const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
      return `${block.file}:${block.line + line}: ${text}`;
    });
  });
}

describe("the docs' code blocks", () => {
  it("each name a language the test checks, or say why they are not run", () => {
    const known = ["ts", "sh", "json", "toml"];
    const unknown = blocks.filter((block) => !block.notRun && !known.includes(block.lang));
    expect(unknown.map(where)).toEqual([]);
    expect(
      blocks.filter((block) => block.notRun).map((block) => `${where(block)}: ${block.notRun}`),
    ).toHaveLength(NOT_RUN_BLOCKS);
  });

  it("ts: type-check against the packages", () => {
    // One program per set of package substitutions: most blocks with the packages as installed.
    const groups = new Map<string, Block[]>();
    for (const block of checked("ts")) {
      const key = JSON.stringify(block.packages ?? {});
      groups.set(key, [...(groups.get(key) ?? []), block]);
    }
    const problems = [...groups.values()].flatMap((group) => typeCheck(group));
    expect(problems).toEqual([]);
    expect(checked("ts").length).toBeGreaterThan(0);
    // The examples for ai@7 are checked against ai@7 itself, not against a stand-in.
    expect(
      checked("ts")
        .filter((block) => block.packages?.ai === "ai-v7")
        .map(where),
    ).not.toEqual([]);
  }, 300_000); // docs/adapters.md's framework examples alone took 25 s of CPU (Mastra, LangChain types) // docs/adapters.md's framework examples alone took 25 s of CPU (Mastra, LangChain types)

  it("sh: parse, and every pleach command in them takes the flags it is given", () => {
    const problems = checked("sh").flatMap((block) => {
      const parsed = spawnSync("/bin/bash", ["-n"], { input: block.code, encoding: "utf8" });
      const own = parsed.status === 0 ? [] : [`${where(block)}: bash -n: ${parsed.stderr.trim()}`];
      const commands = block.code
        .replaceAll("\\\n", " ")
        .split("\n")
        .map((line) => line.replace(/(^|\s)#.*$/, ""));
      return [
        ...own,
        ...commands
          .flatMap((line) => pleachProblems(shellWords(line)))
          .map((problem) => `${where(block)}: ${problem}`),
      ];
    });
    expect(problems).toEqual([]);
    expect(checked("sh").length).toBeGreaterThan(0);
  });

  it("json: parse, and the pleach commands they configure take their flags", () => {
    const problems = checked("json").flatMap((block) => {
      let value: unknown;
      try {
        value = JSON.parse(block.code);
      } catch (error) {
        return [`${where(block)}: ${(error as Error).message}`];
      }
      return configuredCommands(value).flatMap((words) =>
        pleachProblems(words).map((problem) => `${where(block)}: ${problem}`),
      );
    });
    expect(problems).toEqual([]);
  });

  const python = "/usr/bin/python3";
  it.skipIf(!existsSync(python))(
    "toml: parse (with Python's tomllib; skipped without /usr/bin/python3)",
    () => {
      const problems = checked("toml").flatMap((block) => {
        const parsed = spawnSync(
          python,
          ["-c", "import json, sys, tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))"],
          { input: block.code, encoding: "utf8" },
        );
        if (parsed.status !== 0) return [`${where(block)}: ${parsed.stderr.trim()}`];
        return configuredCommands(JSON.parse(parsed.stdout)).flatMap((words) =>
          pleachProblems(words).map((problem) => `${where(block)}: ${problem}`),
        );
      });
      expect(problems).toEqual([]);
    },
  );

  it("every package has a README that its package.json publishes", () => {
    for (const name of PACKAGES) {
      const manifest = JSON.parse(
        readFileSync(path.join(repo, "packages", name, "package.json"), "utf8"),
      );
      expect(
        existsSync(path.join(repo, "packages", name, "README.md")),
        `packages/${name}/README.md`,
      ).toBe(true);
      expect(manifest.files, `packages/${name}/package.json files`).toContain("README.md");
    }
  });
});
