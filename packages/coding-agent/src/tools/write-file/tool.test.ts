import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxMode } from "@pleach/core";
import { useTempDir } from "@pleach/core/testing";
import {
  createCommandWrapper,
  createHttpStreamSandboxProvider,
  createLocalSandbox,
  createSandboxServer,
} from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { createWriteFileTool, type WriteFileToolOptions } from "./tool.js";

async function setup(mode: SandboxMode = "workspace-write", options: WriteFileToolOptions = {}) {
  const temp = await useTempDir();
  const client = await createLocalSandbox({ root: temp, mode });
  return { root: temp, tool: createWriteFileTool(client, options) };
}

describe("write_file", () => {
  it("writes text exactly and counts its UTF-8 bytes, saying when the file is new", async () => {
    const { root, tool } = await setup();
    const text = "héllo ✓ 🎉\n";
    const created = await tool.execute({ path: "deep/new/file.txt", content: text });
    expect(created).toEqual({ bytesWritten: 16, path: "deep/new/file.txt", created: true });
    expect(await readFile(path.join(root, "deep/new/file.txt"), "utf8")).toBe(text);
    expect(tool.toModelOutput(created)).toEqual({
      output: "created deep/new/file.txt (16 bytes)",
      error: false,
    });

    const replaced = await tool.execute({ path: "deep/new/file.txt", content: "" });
    expect(replaced).toEqual({ bytesWritten: 0, path: "deep/new/file.txt", created: false });
    expect(tool.toModelOutput(replaced).output).toBe("wrote deep/new/file.txt (0 bytes)");
    expect(await readFile(path.join(root, "deep/new/file.txt"), "utf8")).toBe("");
  });

  it("writes CRLF, a byte order mark and no final newline as given", async () => {
    const { root, tool } = await setup();
    const text = "\uFEFFa\r\nb\r\nc";
    const output = await tool.execute({ path: "crlf.txt", content: text });
    expect(output.bytesWritten).toBe(10);
    const bytes = await readFile(path.join(root, "crlf.txt"));
    expect([...bytes]).toEqual([0xef, 0xbb, 0xbf, 0x61, 0x0d, 0x0a, 0x62, 0x0d, 0x0a, 0x63]);
  });

  it("writes any bytes from base64, counting decoded bytes even with line breaks", async () => {
    const { root, tool } = await setup();
    const every = Buffer.from(Array.from({ length: 256 }, (_, byte) => byte));
    const wrapped = every.toString("base64").replace(/.{76}/g, "$&\n");
    const output = await tool.execute({ path: "every.bin", content: wrapped, encoding: "base64" });
    expect(output.bytesWritten).toBe(256);
    expect(await readFile(path.join(root, "every.bin"))).toEqual(every);
  });

  it("refuses content that is not base64 without writing", async () => {
    const { root, tool } = await setup();
    await expect(
      tool.execute({ path: "x.bin", content: "not base64!", encoding: "base64" }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT", message: /not valid base64/ });
    expect(await readdir(root)).toEqual([]);
  });

  it("passes the read-only sandbox's refusal on and leaves the file alone", async () => {
    const { root, tool } = await setup("read-only");
    await writeFile(path.join(root, "kept.txt"), "kept");
    await expect(tool.execute({ path: "kept.txt", content: "changed" })).rejects.toMatchObject({
      code: "READ_ONLY",
    });
    await expect(tool.execute({ path: "new.txt", content: "x" })).rejects.toMatchObject({
      code: "READ_ONLY",
    });
    expect(await readdir(root)).toEqual(["kept.txt"]);
    expect(await readFile(path.join(root, "kept.txt"), "utf8")).toBe("kept");
  });

  it("refuses paths that leave the workspace and protected paths", async () => {
    const { root, tool } = await setup();
    const outside = await useTempDir("pleach-outside-");
    await writeFile(path.join(outside, "target.txt"), "outside\n");
    await symlink(path.join(outside, "target.txt"), path.join(root, "link.txt"));
    await symlink(outside, path.join(root, "linked-dir"));
    for (const escaping of [
      "../escaped.txt",
      "/etc/passwd",
      "link.txt",
      "linked-dir/new.txt",
      path.join(outside, "target.txt"),
    ]) {
      await expect(tool.execute({ path: escaping, content: "pwned" })).rejects.toMatchObject({
        code: "PATH_ESCAPE",
      });
    }
    expect(await readdir(outside)).toEqual(["target.txt"]);
    expect(await readFile(path.join(outside, "target.txt"), "utf8")).toBe("outside\n");
    await expect(
      tool.execute({ path: ".git/hooks/pre-commit", content: "#!/bin/sh\n" }),
    ).rejects.toMatchObject({ code: "PROTECTED_PATH" });
  });

  it("refuses to replace a folder", async () => {
    const { root, tool } = await setup();
    await mkdir(path.join(root, "folder"));
    await expect(tool.execute({ path: "folder", content: "x" })).rejects.toMatchObject({
      code: "NOT_A_FILE",
    });
  });

  it("says which limit refused a large file and how to write it in parts", async () => {
    const token = "t".repeat(32);
    const server = await createSandboxServer({
      root: await useTempDir("pleach-write-server-"),
      token,
      maxRequestBytes: 1_000,
      commandWrapper: createCommandWrapper({ backend: "none" }),
      mode: "danger-full-access",
    });
    const provider = createHttpStreamSandboxProvider({
      baseURL: server.url,
      auth: () => ({ headers: { Authorization: `Bearer ${token}` } }),
    });
    try {
      const { client } = await provider.acquire();
      const tool = createWriteFileTool(client);
      await expect(
        tool.execute({ path: "big.txt", content: "x".repeat(5_000) }),
      ).rejects.toMatchObject({
        code: "TOO_LARGE",
        message: expect.stringMatching(
          /^write_file could not write big\.txt \(5,000 bytes\): .*limit of 1,000 bytes.*Write it in parts under that limit: .*`cat part2\.txt >> big\.txt && rm part2\.txt`/,
        ),
        details: { bytes: 5_000 },
      });
      expect(await tool.execute({ path: "small.txt", content: "ok\n" })).toMatchObject({
        bytesWritten: 3,
      });
    } finally {
      provider.close();
      await server.close();
    }
  });

  it("leaves `created` out when asked not to probe", async () => {
    const { tool } = await setup("workspace-write", { detectCreated: false });
    expect(await tool.execute({ path: "a.txt", content: "a" })).toEqual({
      bytesWritten: 1,
      path: "a.txt",
    });
  });

  it("reports wrong input types as INVALID_INPUT", async () => {
    const { root, tool } = await setup();
    for (const input of [
      { path: "a.txt" },
      { path: "a.txt", content: 5 },
      { path: "", content: "x" },
      { path: "a.txt", content: "x", encoding: "hex" },
      { path: "a.txt", content: "x", mode: 0o777 },
      null,
    ]) {
      await expect(tool.execute(input)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    }
    expect(await readdir(root)).toEqual([]);
    expect(tool.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });
});
