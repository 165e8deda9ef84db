// What a model reads from `pleach mcp --max-result-chars N` (the built bin, over stdio): every
// result within N characters, cut with its head and tail kept, and a read_file page shrunk to fit
// whole with its hint, rather than cut in its middle. Needs the build (`npm test` builds first).
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const launcher = path.resolve(import.meta.dirname, "../bin/pleach.js");

/** Line `n` of the big file: 100 characters with its newline, so that 2,000 lines make 200 KB. */
const line = (n: number) => `line ${String(n).padStart(5, "0")} ${"x".repeat(88)}`;

describe("pleach mcp --max-result-chars", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  const clients: Client[] = [];

  async function connect(...flags: string[]): Promise<Client> {
    const client = new Client({ name: "pleach-budget", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [launcher, "mcp", "--workspace", root, ...flags],
        stderr: "pipe",
      }),
    );
    clients.push(client);
    return client;
  }

  async function textOf(client: Client, name: string, args: Record<string, unknown>) {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toBeUndefined();
    const blocks = result.content as Array<{ type: string; text: string }>;
    expect(blocks).toHaveLength(1);
    return blocks[0]?.text ?? "";
  }

  beforeAll(async () => {
    if (!existsSync(path.resolve(import.meta.dirname, "../dist/main.js"))) {
      throw new Error("pleach is not built: run `npx tsc -b` (npm test does it) first");
    }
    ({ dir: root, cleanup } = await makeTempDir("pleach-mcp-budget-"));
    const lines = Array.from({ length: 2_000 }, (_, index) => line(index + 1));
    await writeFile(path.join(root, "big.txt"), `${lines.join("\n")}\n`);
    await mkdir(path.join(root, "many"));
    for (let index = 0; index < 400; index++) {
      await writeFile(path.join(root, "many", `file-${String(index).padStart(3, "0")}.txt`), "x\n");
    }
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
    await cleanup?.();
  });

  it("shrinks a read_file page to the budget, whole lines and a true hint", async () => {
    const client = await connect("--max-result-chars", "12000");
    const page = await textOf(client, "read_file", { path: "big.txt" });
    expect(page.length).toBeLessThanOrEqual(12_000);
    expect(page).not.toContain("characters cut");
    // The page is lines 1 to 110, each whole, and the hint continues right after the last one.
    expect(page.slice(0, 20)).toMatchInlineSnapshot(`"line 00001 xxxxxxxxx"`);
    expect(page.slice(-220)).toMatchInlineSnapshot(`
      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
      line 00110 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
      [lines 1-110 of 2000; call read_file again with offset 111 to continue]"
    `);
    const next = await textOf(client, "read_file", { path: "big.txt", offset: 111 });
    expect(next.startsWith(`${line(111)}\n`)).toBe(true);
  });

  it("cuts a long listing in its middle, its head and tail kept", async () => {
    const client = await connect("--max-result-chars", "2000");
    const listing = await textOf(client, "list_files", { dir: "many" });
    expect(listing.length).toBeLessThanOrEqual(2_000);
    expect(listing).toMatch(
      /\n\n\[\.\.\. [\d,]+ characters cut from the middle of this output \.\.\.\]\n\n/,
    );
    expect(listing.slice(0, 60)).toMatchInlineSnapshot(`
      "many/file-000.txt  (2 bytes)
      many/file-001.txt  (2 bytes)
      ma"
    `);
    expect(listing.slice(-120)).toMatchInlineSnapshot(`
      "tes)
      many/file-396.txt  (2 bytes)
      many/file-397.txt  (2 bytes)
      many/file-398.txt  (2 bytes)
      many/file-399.txt  (2 bytes)"
    `);
  });

  it("keeps the 49,000-character page by default", async () => {
    const client = await connect();
    const page = await textOf(client, "read_file", { path: "big.txt" });
    expect(page.length).toBeLessThanOrEqual(50_000);
    expect(page.slice(-80)).toMatchInlineSnapshot(`
      "xxxxxxxx
      [lines 1-490 of 2000; call read_file again with offset 491 to continue]"
    `);
  });
});
