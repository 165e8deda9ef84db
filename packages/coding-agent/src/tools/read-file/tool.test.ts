import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { type SandboxMode, ToolError, toolInputJSONSchema } from "@pleach/core";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SandboxClient } from "../../sandbox/index.js";
import { splitLinesKeepingEnds } from "../shared/line-numbers.js";
import { createReadFileTool, type ReadFileToolOptions } from "./tool.js";

async function setup(options: ReadFileToolOptions = {}, mode: SandboxMode = "workspace-write") {
  const temp = await useTempDir();
  const client = await createLocalSandbox({ root: temp, mode });
  const put = (name: string, content: string | Uint8Array) =>
    writeFile(path.join(temp, name), content);
  return { root: temp, tool: createReadFileTool(client, options), put };
}

function numberedLines(count: number, width = 0): string {
  return Array.from({ length: count }, (_, index) => `line ${index + 1}`.padEnd(width, ".")).join(
    "\n",
  );
}

describe("read_file", () => {
  it("reads files of every size exactly through the local sandbox, whichever buffer it reads into", async () => {
    const { tool, put } = await setup({
      maxLines: Number.MAX_SAFE_INTEGER,
      maxChars: Number.MAX_SAFE_INTEGER,
      maxLineChars: Number.MAX_SAFE_INTEGER,
    });
    // Around the sizes where the local sandbox's reads become asynchronous (1 MiB) and stop
    // sharing one buffer (4 MiB), in an order where a small file follows a larger one.
    const sizes = [3 << 20, 0, 1, 64 << 10, (1 << 20) - 1, 5 << 20, 1 << 20, (1 << 20) + 1, 10];
    const files = sizes.map((size, index) => {
      const bytes = Buffer.alloc(size);
      for (let at = 0; at < size; at++) bytes[at] = (at * 7 + index) % 251;
      return { bytes, text: String.fromCharCode(0x61 + index).repeat(size) };
    });
    for (const [index, { bytes, text }] of files.entries()) {
      await put(`f${index}`, bytes);
      await put(`t${index}`, text);
    }
    const reads = await Promise.all(
      files.flatMap((_file, index) => [
        tool.execute({ path: `f${index}`, encoding: "base64" }),
        tool.execute({ path: `t${index}` }),
      ]),
    );
    for (const [index, { bytes, text }] of files.entries()) {
      // Compared as a whole: a deep comparison of megabytes, item by item, takes seconds.
      expect(Buffer.from(reads[2 * index]?.content ?? "", "base64").equals(bytes)).toBe(true);
      expect(reads[2 * index + 1]?.content === text).toBe(true);
      expect((await tool.execute({ path: `t${index}` })).content === text).toBe(true);
    }
  });

  it.runIf(process.platform === "linux")(
    "reads a file that holds more than its size says, up to the sandbox's limit",
    async () => {
      // /proc files report a size of 0 and hold more: the read goes on past the size fstat gave.
      const read = async (maxFileBytes?: number) =>
        createReadFileTool(
          await createLocalSandbox({ root: "/proc/self", mode: "read-only", maxFileBytes }),
        ).execute({ path: "status" });
      const { content } = await read();
      expect(content).toMatch(/^Name:\t/);
      expect(content).toContain(`\nPid:\t${process.pid}\n`);
      await expect(read(16)).rejects.toMatchObject({
        code: "TOO_LARGE",
        message: expect.stringContaining("grew past the 16 bytes"),
      });
    },
  );

  it("returns text exactly, with the UTF-8 byte length of what it returns", async () => {
    const { tool, put } = await setup();
    const text = "héllo wörld ✓\n日本語 🎉\n";
    await put("unicode.txt", text);
    const output = await tool.execute({ path: "unicode.txt" });
    expect(output).toEqual({
      content: text,
      bytes: Buffer.byteLength(text, "utf8"),
      encoding: "utf8",
      totalLines: 2,
      startLine: 1,
      endLine: 2,
      truncated: false,
    });
    expect(output.bytes).toBe(33);
    expect(tool.toModelOutput(output)).toEqual({ output: text, error: false });
  });

  it("returns text that really holds U+FFFD, which is valid UTF-8, and refuses a lone NUL", async () => {
    const { tool, put } = await setup();
    await put("replacement.txt", "before \uFFFD after\n");
    expect((await tool.execute({ path: "replacement.txt" })).content).toBe("before \uFFFD after\n");
    await put("nul.txt", "a\0b\n");
    await expect(tool.execute({ path: "nul.txt" })).rejects.toMatchObject({ code: "BINARY_FILE" });
  });

  it("keeps CRLF line endings, the byte order mark and a missing final newline", async () => {
    const { tool, put } = await setup();
    const text = "\uFEFFfirst\r\nsecond\r\nthird";
    await put("windows.txt", text);
    const output = await tool.execute({ path: "windows.txt" });
    expect(output.content).toBe(text);
    expect(output.bytes).toBe(3 + 20);
    expect(output.totalLines).toBe(3);
    expect(tool.toModelOutput(output).output).toBe(text);

    const tail = await tool.execute({ path: "windows.txt", offset: 2 });
    expect(tail.content).toBe("second\r\nthird");
    expect(tool.toModelOutput(tail).output).toMatchInlineSnapshot(`
      "second
      third
      [lines 2-3 of 3; end of file]"
    `);
  });

  it("says when a file is empty", async () => {
    const { tool, put } = await setup();
    await put("empty.txt", "");
    const output = await tool.execute({ path: "empty.txt" });
    expect(output).toMatchObject({ content: "", bytes: 0, totalLines: 0, endLine: 0 });
    expect(tool.toModelOutput(output).output).toBe("[empty file]");
  });

  it("reads a window of lines with offset and limit", async () => {
    const { tool, put } = await setup();
    await put("ten.txt", `${numberedLines(10)}\n`);
    const output = await tool.execute({ path: "ten.txt", offset: 3, limit: 2 });
    expect(output).toEqual({
      content: "line 3\nline 4\n",
      bytes: 14,
      encoding: "utf8",
      totalLines: 10,
      startLine: 3,
      endLine: 4,
      nextOffset: 5,
      truncated: false,
    });
    expect(tool.toModelOutput(output).output).toMatchInlineSnapshot(`
      "line 3
      line 4
      [lines 3-4 of 10; call read_file again with offset 5 to continue]"
    `);
  });

  it("caps a 200,000-line file at 2,000 lines and continues from nextOffset", async () => {
    const { tool, put } = await setup();
    await put("huge.txt", `${numberedLines(200_000)}\n`);
    const first = await tool.execute({ path: "huge.txt" });
    expect(first).toMatchObject({
      totalLines: 200_000,
      startLine: 1,
      endLine: 2_000,
      nextOffset: 2_001,
      truncated: true,
    });
    expect(first.content.endsWith("line 2000\n")).toBe(true);
    const modelText = tool.toModelOutput(first).output;
    expect(
      modelText.slice(modelText.lastIndexOf("\n", modelText.length - 20)),
    ).toMatchInlineSnapshot(`
      "
      [lines 1-2000 of 200000; call read_file again with offset 2001 to continue]"
    `);

    const next = await tool.execute({ path: "huge.txt", offset: first.nextOffset });
    expect(next.content.startsWith("line 2001\n")).toBe(true);
    expect(next).toMatchObject({ startLine: 2_001, endLine: 4_000, nextOffset: 4_001 });

    const last = await tool.execute({ path: "huge.txt", offset: 199_999 });
    expect(last).toMatchObject({ content: "line 199999\nline 200000\n", truncated: false });
    expect(last.nextOffset).toBeUndefined();
  });

  it("stops at the character budget on whole lines and stays under the model cap", async () => {
    const { tool, put } = await setup();
    await put("wide.txt", `${numberedLines(1_000, 199)}\n`);
    const output = await tool.execute({ path: "wide.txt" });
    // 200 characters a line: 245 lines fit in 49,000 characters.
    expect(output).toMatchObject({ endLine: 245, nextOffset: 246, truncated: true });
    expect(output.content.length).toBe(49_000);
    expect(tool.toModelOutput(output).output.length).toBeLessThanOrEqual(50_000);
  });

  it("does not call an explicit limit that was met truncated", async () => {
    const { tool, put } = await setup({ maxLines: 5 });
    await put("ten.txt", numberedLines(10));
    expect(await tool.execute({ path: "ten.txt", limit: 3 })).toMatchObject({
      endLine: 3,
      nextOffset: 4,
      truncated: false,
    });
    expect(await tool.execute({ path: "ten.txt", limit: 8 })).toMatchObject({
      endLine: 5,
      nextOffset: 6,
      truncated: true,
    });
  });

  it("cuts lines longer than the line budget with a marker", async () => {
    const { tool, put } = await setup({ maxLineChars: 10 });
    await put("minified.js", `short\n${"x".repeat(25)}\r\nend`);
    const output = await tool.execute({ path: "minified.js" });
    expect(output.content).toBe(
      "short\nxxxxxxxxxx [... 15 more characters of this line cut]\r\nend",
    );
    expect(output).toMatchObject({ linesCut: 1, truncated: true });
    expect(tool.toModelOutput(output).output).toMatchInlineSnapshot(`
      "short
      xxxxxxxxxx [... 15 more characters of this line cut]
      end
      [lines 1-3 of 3; end of file; 1 line longer than 10 characters cut]"
    `);
  });

  it("refuses an offset past the end of the file", async () => {
    const { tool, put } = await setup();
    await put("three.txt", "a\nb\nc\n");
    await expect(tool.execute({ path: "three.txt", offset: 9 })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message:
        "offset 9 is past the end of three.txt, which has 3 lines. Use an offset from 1 to 3.",
    });
  });

  it("refuses binary content as text and points to base64", async () => {
    const { tool, put } = await setup();
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    await put("image.png", png);
    await expect(tool.execute({ path: "image.png" })).rejects.toMatchObject({
      code: "BINARY_FILE",
      message:
        'image.png looks binary (a NUL byte at byte 8; 12 bytes), so it is not returned as text. Call read_file with encoding "base64" to get its bytes.',
    });
    const output = await tool.execute({ path: "image.png", encoding: "base64" });
    expect(output).toEqual({
      content: Buffer.from(png).toString("base64"),
      bytes: 12,
      encoding: "base64",
      truncated: false,
    });
    expect(tool.toModelOutput(output).output).toBe(`[12 bytes as base64]\n${output.content}`);
  });

  it("refuses text that is not valid UTF-8 anywhere in the file", async () => {
    const { tool, put } = await setup();
    const latin1 = Buffer.concat([Buffer.from("a".repeat(20_000)), Buffer.from([0x63, 0xe9])]);
    await put("latin1.txt", latin1);
    await expect(tool.execute({ path: "latin1.txt" })).rejects.toMatchObject({
      code: "BINARY_FILE",
      message: expect.stringContaining("a byte that is not valid UTF-8 at byte 20001"),
    });
  });

  it("returns any bytes as base64 and refuses files over the base64 cap", async () => {
    const { tool, put } = await setup({ maxBase64Bytes: 100 });
    const every = Uint8Array.from({ length: 256 }, (_, byte) => byte);
    await put("every.bin", every);
    await put("small.bin", every.subarray(0, 100));
    const small = await tool.execute({ path: "small.bin", encoding: "base64" });
    expect(Buffer.from(small.content, "base64")).toEqual(Buffer.from(every.subarray(0, 100)));
    await expect(tool.execute({ path: "every.bin", encoding: "base64" })).rejects.toMatchObject({
      code: "TOO_LARGE",
      message:
        "every.bin has 256 bytes; read_file returns at most 100 bytes as base64. Inspect part of it with a command instead (e.g. `head -c 4096 <file> | xxd`).",
    });
    await expect(
      tool.execute({ path: "small.bin", encoding: "base64", offset: 2 }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });

  it("asks the client to refuse a file over its limit from its size, and words it as its own check after reading", async () => {
    const files = { "huge.bin": Buffer.alloc(5_000, "a"), "small.txt": Buffer.from("ok\n") };
    const run = async (
      options: ReadFileToolOptions,
      input: { path: string; encoding?: "utf8" | "base64" },
      honoursMaxBytes: boolean,
    ) => {
      const client = recordingClient(files, { honoursMaxBytes });
      const tool = createReadFileTool(client, options);
      const error = await tool.execute(input).then(
        () => undefined,
        (thrown: ToolError) => thrown,
      );
      return { error, calls: client.calls };
    };
    const options = { maxBase64Bytes: 1_000, maxTextBytes: 2_000 };
    for (const encoding of ["base64", "utf8"] as const) {
      const input = { path: "huge.bin", encoding };
      const refused = await run(options, input, true);
      const readWhole = await run(options, input, false);
      // Refused from its size: asked with the limit, never read.
      expect(refused.calls).toEqual([
        {
          path: "huge.bin",
          encoding,
          maxBytes: options[encoding === "base64" ? "maxBase64Bytes" : "maxTextBytes"],
          read: false,
        },
      ]);
      expect(readWhole.calls.map(({ read }) => read)).toEqual([true]);
      const seen = ({ error }: { error: ToolError | undefined }) =>
        error && { code: error.code, message: error.message, details: error.details };
      expect(seen(refused)).toEqual(seen(readWhole));
      expect(refused.error?.code).toBe("TOO_LARGE");
    }
    const [base64, utf8] = await Promise.all([
      run(options, { path: "huge.bin", encoding: "base64" }, true),
      run(options, { path: "huge.bin" }, true),
    ]);
    expect(base64.error?.details).toEqual({ bytes: 5_000, maxBase64Bytes: 1_000 });
    expect(base64.error?.message).toMatchInlineSnapshot(
      `"huge.bin has 5,000 bytes; read_file returns at most 1,000 bytes as base64. Inspect part of it with a command instead (e.g. \`head -c 4096 <file> | xxd\`)."`,
    );
    expect(utf8.error?.details).toEqual({ bytes: 5_000, maxTextBytes: 2_000 });
    expect(utf8.error?.message).toMatchInlineSnapshot(
      `"huge.bin has 5,000 bytes; read_file reads text files of at most 2,000 bytes. Search it or read part of it with a command instead (e.g. \`grep -n PATTERN <file>\`, \`sed -n '1,200p' <file>\` or \`tail -n 200 <file>\`)."`,
    );
    // The defaults, and no limit asked for when the tool has none.
    const asked = await Promise.all([
      run({}, { path: "small.txt" }, true),
      run({}, { path: "small.txt", encoding: "base64" }, true),
      run({ maxTextBytes: Number.POSITIVE_INFINITY }, { path: "small.txt" }, true),
    ]);
    expect(asked.map(({ error, calls }) => [error, calls.map((call) => call.maxBytes)])).toEqual([
      [undefined, [32 * 1024 * 1024]],
      [undefined, [10 * 1024 * 1024]],
      [undefined, [undefined]],
    ]);
  });

  it("asks for the raw bytes of text that looks binary within the same limit", async () => {
    const tooLarge =
      /^latin1\.txt has 3,000 bytes; read_file reads text files of at most 2,000 bytes\./;
    for (const honoursMaxBytes of [true, false]) {
      // Not UTF-8: each byte decodes to one U+FFFD, then the raw bytes are read to tell why.
      const client = recordingClient(
        { "latin1.txt": Buffer.alloc(3_000, 0xe9), "short.txt": Buffer.alloc(1_500, 0xe9) },
        { honoursMaxBytes },
      );
      const tool = createReadFileTool(client, { maxTextBytes: 2_000 });
      await expect(tool.execute({ path: "latin1.txt" })).rejects.toMatchObject({
        code: "TOO_LARGE",
        message: expect.stringMatching(tooLarge),
      });
      await expect(tool.execute({ path: "short.txt" })).rejects.toMatchObject({
        code: "BINARY_FILE",
      });
      expect(
        client.calls.map(({ path, encoding, maxBytes }) => [path, encoding, maxBytes]),
      ).toEqual([
        ["latin1.txt", "utf8", 2_000],
        ...(honoursMaxBytes ? [] : [["latin1.txt", "base64", 2_000]]),
        ["short.txt", "utf8", 2_000],
        ["short.txt", "base64", 2_000],
      ]);
    }
  });

  it("passes on a refusal under a lower limit of the client's own, adding the way past it", async () => {
    const client = recordingClient(
      { "a.bin": Buffer.alloc(50) },
      { honoursMaxBytes: true, maxFileBytes: 10 },
    );
    for (const encoding of ["base64", "utf8"] as const) {
      await expect(
        createReadFileTool(client).execute({ path: "a.bin", encoding }),
      ).rejects.toMatchObject({
        code: "TOO_LARGE",
        message: expect.stringMatching(
          encoding === "base64"
            ? /^a\.bin has 50 bytes, more than the 10 this client reads\. Inspect part of it with a command instead \(e\.g\. `head -c 4096 <file> \| xxd`\)\.$/
            : /^a\.bin has 50 bytes, more than the 10 this client reads\. Search it or read part of it with a command instead \(e\.g\. `grep -n PATTERN <file>`/,
        ),
        details: { bytes: 50, maxBytes: 10 },
      });
    }
  });

  it("refuses paths that leave the workspace, and names what is wrong", async () => {
    const { root, tool } = await setup();
    const outside = await useTempDir("pleach-outside-");
    await writeFile(path.join(outside, "secret.txt"), "secret\n");
    await symlink(path.join(outside, "secret.txt"), path.join(root, "link.txt"));
    await symlink(outside, path.join(root, "linked-dir"));
    await mkdir(path.join(root, "folder"));
    for (const escaping of [
      "../secret.txt",
      "/etc/passwd",
      "link.txt",
      "linked-dir/secret.txt",
      path.join(outside, "secret.txt"),
    ]) {
      await expect(tool.execute({ path: escaping })).rejects.toMatchObject({
        code: "PATH_ESCAPE",
      });
    }
    await expect(tool.execute({ path: "missing.txt" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(tool.execute({ path: "folder" })).rejects.toMatchObject({ code: "NOT_A_FILE" });
  });

  it("reports wrong input types as INVALID_INPUT naming the field", async () => {
    const { tool } = await setup();
    for (const input of [
      { path: 42 },
      {},
      { path: "a.txt", offset: 0 },
      { path: "a.txt", offset: "2" },
      { path: "a.txt", limit: 1.5 },
      { path: "a.txt", encoding: "latin1" },
      { path: "a.txt", extra: true },
      "a.txt",
    ]) {
      await expect(tool.execute(input)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    }
    await expect(tool.execute({ path: "a.txt", offset: 0 })).rejects.toThrow(/offset/);
  });

  it("is read-only, works in a read-only sandbox and documents offset as 1-based", async () => {
    const { tool, put } = await setup({}, "read-only");
    await put("a.txt", "a\n");
    expect((await tool.execute({ path: "a.txt" })).content).toBe("a\n");
    expect(tool.annotations.readOnlyHint).toBe(true);
    const schema = toolInputJSONSchema(tool) as {
      properties: Record<string, { description?: string }>;
      required: string[];
    };
    expect(schema.required).toEqual(["path"]);
    expect(schema.properties.offset?.description).toMatch(/1-based line number/);
  });
});

describe("read_file windows (property)", () => {
  it("reads the window a plain line-by-line reading gives, whatever the budgets", async () => {
    const temp = await useTempDir();
    const client = await createLocalSandbox({ root: temp, mode: "read-only" });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("a", "bb", "", "\r", "é", "🎉🎉🎉", "xyz xyz xyz", "\r\r"), {
          maxLength: 12,
        }),
        fc.array(fc.constantFrom("\n", "\r\n", ""), { maxLength: 12 }),
        fc.record({
          offset: fc.integer({ min: 1, max: 14 }),
          limit: fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
          maxLines: fc.integer({ min: 1, max: 8 }),
          maxChars: fc.integer({ min: 1, max: 60 }),
          maxLineChars: fc.integer({ min: 1, max: 12 }),
        }),
        async (bodies, endings, { offset, limit, ...budgets }) => {
          const text = bodies.map((body, index) => body + (endings[index] ?? "\n")).join("");
          await writeFile(path.join(temp, "p.txt"), text);
          const tool = createReadFileTool(client, budgets);
          const expected = readPlainly(text, offset, limit, budgets);
          const read = tool.execute({ path: "p.txt", offset, limit });
          if (expected === undefined) {
            await expect(read).rejects.toMatchObject({ code: "INVALID_INPUT" });
          } else {
            expect(await read).toEqual(expected);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("returns whole consecutive lines from offset, and counts lines as splitting does", async () => {
    const { tool, put } = await setup({ maxLines: 7, maxChars: 60, maxLineChars: 1_000 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("a", "bb", "", "\r", "é", "🎉", "xyz "), { maxLength: 12 }),
        fc.array(fc.constantFrom("\n", "\r\n"), { maxLength: 12 }),
        fc.integer({ min: 1, max: 14 }),
        async (bodies, endings, offset) => {
          const text = bodies.map((body, index) => body + (endings[index] ?? "")).join("");
          await put("p.txt", text);
          const lines = splitLinesKeepingEnds(text);
          if (offset > Math.max(lines.length, 1)) {
            await expect(tool.execute({ path: "p.txt", offset })).rejects.toMatchObject({
              code: "INVALID_INPUT",
            });
            return;
          }
          const output = await tool.execute({ path: "p.txt", offset });
          expect(output.totalLines).toBe(lines.length);
          const returned = (output.endLine ?? 0) - offset + 1;
          expect(output.content).toBe(lines.slice(offset - 1, offset - 1 + returned).join(""));
          expect(output.bytes).toBe(Buffer.byteLength(output.content, "utf8"));
        },
      ),
      { numRuns: 150 },
    );
  });
});

/** read_file's window, computed the plain way: split into lines, cut each, add while they fit. */
function readPlainly(
  text: string,
  offset: number,
  limit: number | undefined,
  {
    maxLines,
    maxChars,
    maxLineChars,
  }: Required<Pick<ReadFileToolOptions, "maxLines" | "maxChars" | "maxLineChars">>,
): Record<string, unknown> | undefined {
  const lines = splitLinesKeepingEnds(text);
  if (offset > Math.max(lines.length, 1)) return undefined;
  const wanted = limit ?? Number.POSITIVE_INFINITY;
  const pieces: string[] = [];
  let characters = 0;
  let linesCut = 0;
  for (const original of lines.slice(offset - 1)) {
    if (pieces.length >= Math.min(wanted, maxLines)) break;
    const body = original.replace(/\r?\n$/, "");
    let line = original;
    if (body.length > maxLineChars) {
      let keep = maxLineChars;
      const last = body.charCodeAt(keep - 1);
      if (last >= 0xd800 && last <= 0xdbff) keep -= 1;
      const cutChars = (body.length - keep).toLocaleString("en-US");
      line = `${body.slice(0, keep)} [... ${cutChars} more characters of this line cut]${original.slice(body.length)}`;
    }
    if (pieces.length > 0 && characters + line.length > maxChars) break;
    if (line !== original) linesCut += 1;
    pieces.push(line);
    characters += line.length;
  }
  const content = pieces.join("");
  const endLine = offset + pieces.length - 1;
  return {
    content,
    bytes: Buffer.byteLength(content, "utf8"),
    encoding: "utf8",
    totalLines: lines.length,
    startLine: offset,
    endLine,
    truncated: (endLine < lines.length && pieces.length < wanted) || linesCut > 0,
    ...(endLine < lines.length ? { nextOffset: endLine + 1 } : {}),
    ...(linesCut > 0 ? { linesCut } : {}),
  };
}

/** One `readFile` call a {@link recordingClient} answered. */
interface ReadCall {
  path: string;
  encoding: string | undefined;
  maxBytes: number | undefined;
  /** Whether the file's bytes were read (and not refused from its size). */
  read: boolean;
}

/**
 * A client over files held in memory that records each `readFile` call. It refuses a file over its
 * own `maxFileBytes`, and when it honours `maxBytes`, over that, from the file's size as the
 * contract says, in words the tool replaces when its own limit is the one passed.
 */
function recordingClient(
  files: Record<string, Buffer>,
  {
    honoursMaxBytes,
    maxFileBytes = Number.POSITIVE_INFINITY,
  }: { honoursMaxBytes: boolean; maxFileBytes?: number },
): SandboxClient & { calls: ReadCall[] } {
  const calls: ReadCall[] = [];
  return {
    calls,
    async readFile(path, { encoding, maxBytes } = {}) {
      const bytes = files[path];
      if (bytes === undefined) throw new ToolError("NOT_FOUND", `no such file: ${path}`);
      const call: ReadCall = { path, encoding, maxBytes, read: false };
      calls.push(call);
      const limit = Math.min(
        maxFileBytes,
        (honoursMaxBytes ? maxBytes : undefined) ?? Number.POSITIVE_INFINITY,
      );
      if (bytes.length > limit) {
        throw new ToolError(
          "TOO_LARGE",
          `${path} has ${bytes.length} bytes, more than the ${limit} this client reads`,
          {
            details: { bytes: bytes.length, maxBytes: limit },
          },
        );
      }
      call.read = true;
      return bytes.toString(encoding === "base64" ? "base64" : "utf8");
    },
    async writeFile() {
      throw new ToolError("READ_ONLY", "this client only reads");
    },
    async exec() {
      throw new ToolError("UNSUPPORTED", "this client only reads");
    },
  };
}
