import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { AnyToolDefinition } from "@pleach/core";
import { forceRemove, makeTempDir, useTempDir } from "@pleach/core/testing";
import { createLocalSandbox, type LocalSandbox } from "@pleach/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { monorepoTypeServers, typeCheckSkipReason } from "../../test-support/type-servers.js";
import { createCodingAgentTools } from "../coding-agent-tools.js";
import { createTypeDiagnostics, type TypeDiagnostics } from "./type-diagnostics.js";

// Real language servers, run as jobs of a real session sandbox, over real files.

const bundled = monorepoTypeServers();
const skipReason = await typeCheckSkipReason();

/** A workspace over a session sandbox that can read the servers, and its tools with type checks. */
async function typeCheckedWorkspace({
  timeoutMs = 60_000,
  startTimeoutMs = 60_000,
  servers = true,
  root,
}: {
  timeoutMs?: number;
  startTimeoutMs?: number;
  /** Give the monorepo's servers (else only the workspace's own are looked for). */
  servers?: boolean;
  /** @default a temporary folder removed after the test */
  root?: string;
} = {}) {
  root ??= await useTempDir("pleach-types-");
  const client = await createLocalSandbox({
    root,
    mode: "workspace-write",
    session: true,
    allowReads: bundled?.readFolders ?? [],
  });
  const typeDiagnostics = createTypeDiagnostics(client, {
    servers: servers ? (bundled?.servers ?? {}) : {},
    timeoutMs,
    startTimeoutMs,
  });
  const tools = createCodingAgentTools(client, { typeDiagnostics });
  const call = async (name: string, input: Record<string, unknown>) => {
    const tool = tools.find((each) => each.name === name) as AnyToolDefinition;
    return tool.toModelOutput(await tool.execute(input, {})).output;
  };
  return {
    root,
    client,
    typeDiagnostics,
    put: (name: string, content: string) => writeFile(path.join(root, name), content),
    edit: (file: string, old: string, replacement: string) =>
      call("edit_file", { path: file, old, new: replacement }),
    call,
  };
}

const TS = [
  "export function add(a: number, b: number): number {",
  "  return a + b;",
  "}",
  "",
  "export const total: number = add(1, 2);",
  "",
].join("\n");

const PY = [
  "def add(a: int, b: int) -> int:",
  "    return a + b",
  "",
  "total: int = add(1, 2)",
  "",
].join("\n");

describe.skipIf(skipReason !== undefined)(
  `type diagnostics after edits${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    let workspace: Awaited<ReturnType<typeof typeCheckedWorkspace>>;
    let client: LocalSandbox;
    let typeDiagnostics: TypeDiagnostics;
    let root: string;
    beforeAll(async () => {
      // One session for these tests: each server starts once.
      root = (await makeTempDir("pleach-types-")).dir;
      workspace = await typeCheckedWorkspace({ root });
      ({ client, typeDiagnostics } = workspace);
    });
    afterAll(async () => {
      await typeDiagnostics?.close();
      await client?.close();
      await forceRemove(root);
    });

    it("a TypeScript edit that makes a type error gets it with its line; the edit that fixes it says so", async () => {
      await workspace.put("sum.ts", TS);
      const broken = await workspace.edit("sum.ts", "total: number", "total: string");
      expect(broken).toBe(
        [
          "edited sum.ts (1 replacement at line 5)",
          "Type check (TypeScript): the change introduced 1 type error in sum.ts: line 5: Type 'number' is not assignable to type 'string'. (TS2322); fix it before running the code.",
        ].join("\n"),
      );
      const fixed = await workspace.edit("sum.ts", "total: string", "total: number");
      expect(fixed).toContain(
        "Type check (TypeScript): the change fixed 1 type error in sum.ts (before it: line 5: Type 'number' is not assignable to type 'string'. (TS2322)).",
      );
    }, 120_000);

    it("a Python edit that makes a type error gets it with its line; the edit that fixes it says so", async () => {
      await workspace.put("sum.py", PY);
      const broken = await workspace.edit("sum.py", "return a + b", "return str(a + b)");
      expect(broken).toContain(
        "Type check (pyright): the change introduced 1 type error in sum.py: line 2: ",
      );
      expect(broken).toContain("(reportReturnType)");
      const fixed = await workspace.edit("sum.py", "return str(a + b)", "return a + b");
      expect(fixed).toContain(
        "Type check (pyright): the change fixed 1 type error in sum.py (before it: line 2: ",
      );
    }, 120_000);

    it("errors already in the file are not the edit's: they are counted, not listed", async () => {
      await workspace.put("old.ts", `${TS}export const wrong: string = 1;\n`);
      const output = await workspace.edit("old.ts", "return a + b;", "return b + a;");
      expect(output).toContain(
        "Type check (TypeScript): no new type errors in old.ts. 1 type error already there remain.",
      );
      // Lines moved by the edit keep their errors as old ones.
      const moved = await workspace.edit(
        "old.ts",
        "export function add",
        "// a comment\nexport function add",
      );
      expect(moved).toContain("no new type errors in old.ts. 1 type error already there remain.");
    }, 120_000);

    it("write_file and apply_diff results get the check too; a new file's errors are all new", async () => {
      const written = await workspace.call("write_file", {
        path: "fresh.ts",
        content: "export const n: number = 'one';\n",
      });
      expect(written).toContain(
        "Type check (TypeScript): the change introduced 1 type error in fresh.ts: line 1:",
      );
      const diffed = await workspace.call("apply_diff", {
        path: "fresh.ts",
        diff: "--- fresh.ts\n+++ fresh.ts\n@@ -1 +1 @@\n-export const n: number = 'one';\n+export const n: number = 1;\n",
      });
      expect(diffed).toContain(
        "Type check (TypeScript): the change fixed 1 type error in fresh.ts",
      );
    }, 120_000);

    it("a file no server fits says so in one line", async () => {
      await workspace.put("notes.md", "hello\n");
      const output = await workspace.edit("notes.md", "hello", "goodbye");
      expect(output).toBe(
        [
          "edited notes.md (1 replacement at line 1)",
          "Type check: no language server fits notes.md (checked: TypeScript (.ts .mts .cts .tsx .js .mjs .cjs .jsx) and pyright (.py .pyi)).",
        ].join("\n"),
      );
    });

    it("the servers run as the session's jobs, and end with the check", async () => {
      const commands = ((await client.jobs?.list()) ?? []).map((job) => job.command);
      expect(commands.some((command) => command.includes("typescript-language-server"))).toBe(true);
      expect(commands.some((command) => command.includes("pyright"))).toBe(true);
    });
  },
);

/** A language server that answers `initialize` and nothing else (LSP framing by hand: a test's stand-in). */
const SILENT_SERVER = `let buffer = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf("\\r\\n\\r\\n");
    if (end === -1) return;
    const length = Number(/Content-Length: (\\d+)/i.exec(buffer.subarray(0, end).toString())[1]);
    if (buffer.length < end + 4 + length) return;
    const message = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString());
    buffer = buffer.subarray(end + 4 + length);
    if (message.method === "initialize") {
      const body = JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { capabilities: {} } });
      process.stdout.write("Content-Length: " + Buffer.byteLength(body) + "\\r\\n\\r\\n" + body);
    }
  }
});
`;

describe.skipIf(skipReason !== undefined)(
  `type diagnostics when no server answers${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("a server that never starts is bounded: the edit is written and the result says the check did not answer", async () => {
      const workspace = await typeCheckedWorkspace({
        timeoutMs: 1_000,
        startTimeoutMs: 1_500,
        servers: false,
      });
      // A "server" that reads its input and never answers.
      await mkdir(path.join(workspace.root, "node_modules/typescript-language-server/lib"), {
        recursive: true,
      });
      await workspace.put(
        "node_modules/typescript-language-server/lib/cli.mjs",
        "process.stdin.resume();\nsetInterval(() => {}, 60_000);\n",
      );
      await workspace.put("slow.ts", TS);
      try {
        const output = await workspace.edit("slow.ts", "return a + b;", "return b + a;");
        expect(output).toBe(
          [
            "edited slow.ts (1 replacement at line 2)",
            "Type check of slow.ts unavailable: the TypeScript language server did not answer within 1500 ms (while starting); it goes on, and the next change is checked again.",
          ].join("\n"),
        );
      } finally {
        await workspace.typeDiagnostics.close();
        await workspace.client.close();
      }
    }, 60_000);

    it("a server that starts but never answers a check is bounded, at start and once started", async () => {
      const workspace = await typeCheckedWorkspace({
        timeoutMs: 1_000,
        startTimeoutMs: 3_000,
        servers: false,
      });
      await mkdir(path.join(workspace.root, "node_modules/pyright"), { recursive: true });
      await workspace.put("node_modules/pyright/langserver.index.js", SILENT_SERVER);
      await workspace.put("slow.py", PY);
      try {
        // The first check waits for the start, then gets no answer; the next has the warm bound.
        expect(await workspace.edit("slow.py", "return a + b", "return b + a")).toContain(
          "Type check of slow.py unavailable: the pyright language server did not answer within 3000 ms (while checking)",
        );
        expect(await workspace.edit("slow.py", "return b + a", "return a + b")).toContain(
          "Type check of slow.py unavailable: the pyright language server did not answer within 1000 ms (while checking)",
        );
      } finally {
        await workspace.typeDiagnostics.close();
        await workspace.client.close();
      }
    }, 90_000);

    it("a server that exits is reported, and started again for the next change", async () => {
      const workspace = await typeCheckedWorkspace({ servers: false });
      await mkdir(path.join(workspace.root, "node_modules/pyright"), { recursive: true });
      await workspace.put("node_modules/pyright/langserver.index.js", "process.exit(3);\n");
      await workspace.put("crash.py", PY);
      try {
        const line =
          "Type check of crash.py unavailable: the pyright language server exited (exit code 3); the next change starts it again.";
        expect(await workspace.edit("crash.py", "return a + b", "return b + a")).toContain(line);
        expect(await workspace.edit("crash.py", "return b + a", "return a + b")).toContain(line);
        const started = ((await workspace.client.jobs?.list()) ?? []).length;
        expect(started).toBe(2);
      } finally {
        await workspace.typeDiagnostics.close();
        await workspace.client.close();
      }
    }, 60_000);

    it("without a server in the sandbox, the result says how to enable it", async () => {
      const workspace = await typeCheckedWorkspace({ servers: false });
      await workspace.put("none.py", PY);
      try {
        const output = await workspace.edit("none.py", "return a + b", "return b + a");
        expect(output).toContain(
          "Type check of none.py unavailable: no pyright language server in the sandbox. To enable it, install it in the workspace (`npm install --save-dev --save-exact pyright@1.1.414`)",
        );
      } finally {
        await workspace.typeDiagnostics.close();
        await workspace.client.close();
      }
    }, 60_000);
  },
);

describe("type diagnostics over a client without jobs", () => {
  it("say the check is unavailable, and why", async () => {
    const root = await useTempDir("pleach-types-");
    const client = await createLocalSandbox({ root, mode: "workspace-write" });
    const typeDiagnostics = createTypeDiagnostics(client);
    const [edit] = createCodingAgentTools(client, { typeDiagnostics, only: ["edit_file"] });
    await writeFile(path.join(root, "a.ts"), TS);
    const output = edit?.toModelOutput(
      await edit.execute({ path: "a.ts", old: "a + b", new: "b + a" }, {}),
    ).output;
    expect(output).toContain(
      "Type check of a.ts unavailable: this sandbox runs no background jobs, where the language server would run (use a client with a session).",
    );
  });
});
