import { chmod, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolErrorCode } from "../errors.js";
import type { SandboxClient } from "../sandbox/contract.js";
import { makeTempDir } from "./temp-dir.js";

/** What a backend under test can do. */
export interface ContractCapabilities {
  /** Whether `exec` runs commands (false: it must refuse with `NO_SANDBOX`). */
  exec: boolean;
  /** Whether the host file system is shared with the test, so files can be planted directly. */
  sharedFileSystem: boolean;
}

/** Makes a client over a fresh workspace folder `root` (already created, empty). */
export type ContractClientFactory = (root: string) => Promise<SandboxClient>;

async function expectCode(promise: Promise<unknown>, code: ToolErrorCode): Promise<void> {
  await expect(promise).rejects.toMatchObject({ name: "ToolError", code });
}

/**
 * The contract every {@link SandboxClient} satisfies, run against the local client now and every
 * later backend (bubblewrap, HTTP). The client is over a writable workspace.
 */
export function describeSandboxClientContract(
  name: string,
  makeClient: ContractClientFactory,
  capabilities: ContractCapabilities,
): void {
  describe(`SandboxClient contract: ${name}`, () => {
    let root: string;
    let outside: string;
    let client: SandboxClient;
    const cleanups: Array<() => Promise<void>> = [];

    beforeEach(async () => {
      const workspace = await makeTempDir("pleach-contract-");
      const elsewhere = await makeTempDir("pleach-outside-");
      cleanups.push(workspace.cleanup, elsewhere.cleanup);
      root = workspace.dir;
      outside = elsewhere.dir;
      await writeFile(path.join(outside, "secret.txt"), "outside secret\n");
      client = await makeClient(root);
    });
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0)) await cleanup();
    });

    describe("files", () => {
      it("round-trips utf8 text, creating parent folders", async () => {
        await client.writeFile("a/b/c.txt", "héllo\r\nwörld");
        expect(await client.readFile("a/b/c.txt")).toBe("héllo\r\nwörld");
        if (capabilities.sharedFileSystem) {
          expect(await readFile(path.join(root, "a/b/c.txt"), "utf8")).toBe("héllo\r\nwörld");
        }
      });

      it("round-trips every byte value through base64", async () => {
        const bytes = Buffer.from(Array.from({ length: 256 }, (_, index) => index));
        await client.writeFile("bin.dat", bytes.toString("base64"), { encoding: "base64" });
        expect(await client.readFile("bin.dat", { encoding: "base64" })).toBe(
          bytes.toString("base64"),
        );
      });

      it("accepts absolute paths inside the root", async () => {
        await client.writeFile(path.join(root, "abs.txt"), "x");
        expect(await client.readFile(path.join(root, "abs.txt"))).toBe("x");
      });

      it("overwrites atomically and keeps the file's mode", async () => {
        await client.writeFile("run.sh", "#!/bin/sh\n");
        if (capabilities.sharedFileSystem) await chmod(path.join(root, "run.sh"), 0o751);
        await client.writeFile("run.sh", "#!/bin/sh\necho hi\n");
        expect(await client.readFile("run.sh")).toBe("#!/bin/sh\necho hi\n");
        if (capabilities.sharedFileSystem) {
          expect((await stat(path.join(root, "run.sh"))).mode & 0o777).toBe(0o751);
        }
      });

      it("writes an empty file", async () => {
        await client.writeFile("empty.txt", "");
        expect(await client.readFile("empty.txt")).toBe("");
      });

      it("reports a missing file as NOT_FOUND and a folder as NOT_A_FILE", async () => {
        await expectCode(client.readFile("missing.txt"), "NOT_FOUND");
        await client.writeFile("folder/x.txt", "x");
        await expectCode(client.readFile("folder"), "NOT_A_FILE");
        await expectCode(client.writeFile("folder", "x"), "NOT_A_FILE");
      });

      it.each([
        ["../escape.txt"],
        ["a/../../escape.txt"],
        ["/etc/passwd"],
        ["/etc/pleach-should-not-exist"],
      ])("refuses the escaping path %s", async (escaping) => {
        await expectCode(client.readFile(escaping), "PATH_ESCAPE");
        await expectCode(client.writeFile(escaping, "pwned"), "PATH_ESCAPE");
      });

      it("refuses a sibling folder that shares the root's name as a prefix", async () => {
        await expectCode(client.readFile(`${root}-evil/x`), "PATH_ESCAPE");
        await expectCode(client.readFile(`../${path.basename(root)}-evil/x`), "PATH_ESCAPE");
      });

      it("refuses NUL bytes and non-string paths", async () => {
        await expectCode(client.readFile("a\0b"), "INVALID_PATH");
        await expectCode(client.writeFile("a\0b", "x"), "INVALID_PATH");
        await expectCode(client.readFile(42 as unknown as string), "INVALID_PATH");
      });

      it.runIf(capabilities.sharedFileSystem)(
        "refuses symlinks that lead out, for files and folders",
        async () => {
          await symlink(path.join(outside, "secret.txt"), path.join(root, "link.txt"));
          await symlink(outside, path.join(root, "linkdir"));
          await symlink(path.join(outside, "nothing-yet"), path.join(root, "dangling"));
          await expectCode(client.readFile("link.txt"), "PATH_ESCAPE");
          await expectCode(client.writeFile("link.txt", "pwned"), "PATH_ESCAPE");
          await expectCode(client.readFile("linkdir/secret.txt"), "PATH_ESCAPE");
          await expectCode(client.writeFile("linkdir/new.txt", "pwned"), "PATH_ESCAPE");
          await expectCode(client.writeFile("dangling", "pwned"), "PATH_ESCAPE");
          expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("outside secret\n");
          await expect(stat(path.join(outside, "new.txt"))).rejects.toThrow();
          await expect(stat(path.join(outside, "nothing-yet"))).rejects.toThrow();
        },
      );

      it.runIf(capabilities.sharedFileSystem)("follows symlinks that stay inside", async () => {
        await mkdir(path.join(root, "real"));
        await writeFile(path.join(root, "real/file.txt"), "inside");
        await symlink("real", path.join(root, "alias"));
        expect(await client.readFile("alias/file.txt")).toBe("inside");
      });

      it("refuses invalid base64 and unknown encodings", async () => {
        await expectCode(
          client.writeFile("x.bin", "not base64!!", { encoding: "base64" }),
          "INVALID_INPUT",
        );
        await expectCode(
          client.readFile("x.bin", { encoding: "latin1" as unknown as "utf8" }),
          "INVALID_INPUT",
        );
      });
    });

    describe.runIf(capabilities.exec)(
      capabilities.exec ? "exec" : "exec (skipped: this client refuses commands; see below)",
      () => {
        it("returns exit code, stdout and stderr as data", async () => {
          const result = await client.exec("echo out; echo err >&2; exit 3");
          expect(result).toMatchObject({
            exitCode: 3,
            stdout: "out\n",
            stderr: "err\n",
            timedOut: false,
            truncated: false,
          });
          expect(result.durationMs).toBeGreaterThanOrEqual(0);
        });

        it("runs in the workspace root by default and in a confined cwd", async () => {
          await client.writeFile("sub/marker.txt", "m");
          expect((await client.exec("pwd")).stdout.trim()).toBe(root);
          expect((await client.exec("ls", { cwd: "sub" })).stdout.trim()).toBe("marker.txt");
          await expectCode(client.exec("pwd", { cwd: ".." }), "PATH_ESCAPE");
          await expectCode(client.exec("pwd", { cwd: "missing" }), "NOT_FOUND");
          await expectCode(client.exec("pwd", { cwd: "sub/marker.txt" }), "NOT_A_DIRECTORY");
        });

        it("passes env and stdin, and gives an empty stdin by default", async () => {
          expect(
            (await client.exec('printf %s "$PLEACH_X"', { env: { PLEACH_X: "y z" } })).stdout,
          ).toBe("y z");
          expect((await client.exec("cat", { stdin: "piped\n" })).stdout).toBe("piped\n");
          const noInput = await client.exec("cat; echo done");
          expect(noInput.stdout).toBe("done\n");
        });

        it("sees the files it wrote and the files written through the client", async () => {
          await client.writeFile("in.txt", "from client");
          const result = await client.exec("cat in.txt && printf made > out.txt");
          expect(result.stdout).toBe("from client");
          expect(await client.readFile("out.txt")).toBe("made");
        });

        it("kills the whole process group on timeout", async () => {
          const result = await client.exec("sleep 30 & sleep 30; echo never", { timeoutMs: 300 });
          expect(result.timedOut).toBe(true);
          expect(result.stdout).not.toContain("never");
          expect(result.exitCode).toBeNull();
        });

        it("returns when the command exits even if a background child holds the pipes", async () => {
          const result = await client.exec("(setsid sleep 30 &) ; echo quick", {
            timeoutMs: 20_000,
          });
          expect(result.stdout).toBe("quick\n");
          expect(result.exitCode).toBe(0);
          expect(result.timedOut).toBe(false);
        });

        it("keeps bounded output of a command that prints a lot", async () => {
          const result = await client.exec(
            "head -c 5000000 /dev/zero | tr '\\0' a; echo; echo END",
            {
              maxOutputBytes: 10_000,
            },
          );
          expect(result.truncated).toBe(true);
          expect(result.stdout.length).toBeLessThan(11_000);
          expect(result.stdout.startsWith("aaaa")).toBe(true);
          expect(result.stdout.endsWith("END\n")).toBe(true);
          expect(result.stdout).toMatch(/bytes of stdout cut/);
        });

        it("is aborted by an abort signal", async () => {
          const controller = new AbortController();
          setTimeout(() => controller.abort(), 200);
          await expectCode(client.exec("sleep 30", { abortSignal: controller.signal }), "ABORTED");
        });

        it("refuses an empty command", async () => {
          await expectCode(client.exec(""), "INVALID_INPUT");
        });
      },
    );

    describe.runIf(!capabilities.exec)(
      capabilities.exec
        ? "exec without a sandbox (skipped: this client runs commands)"
        : "exec without a sandbox",
      () => {
        it("refuses with NO_SANDBOX", async () => {
          await expectCode(client.exec("echo hi"), "NO_SANDBOX");
        });
      },
    );
  });
}
