// Git templates are cloned inside the new sandbox, never by the host: with the network off the
// host makes no connection at all, a failure says the network is off and how to allow it, and no
// error echoes what a remote answered. Local clones (file://) still work, read-only sandboxes too.
import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { isToolError } from "@pleach/core";
import type { SandboxClient } from "@pleach/core/sandbox";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createHttpStreamSandboxProvider,
  type HttpStreamSandboxProvider,
} from "../http-provider.js";
import { createSandboxServer, type SandboxServer } from "./sandbox-server.js";

const TOKEN = "templates-token-0123456789abcdef";
const auth = () => ({ headers: { Authorization: `Bearer ${TOKEN}` } });
/** What the fake remote answers: no error text may carry it. */
const MARKER = `remote-said-${process.pid}-7f3a9c`;
const cleanups: Array<() => Promise<void>> = [];
let serverRoot: string;
/** A repository the sandboxes can see (outside /tmp, which is private inside them). */
let repository: string;

const git = (cwd: string, ...args: string[]) =>
  promisify(execFile)("git", args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.invalid",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.invalid",
    },
  });

/** A folder a confined command can read: the host's /tmp is hidden from it by a private one. */
async function sandboxVisibleFolder(prefix: string): Promise<string> {
  let parent = os.tmpdir();
  if (path.resolve(parent) === "/tmp") {
    try {
      await access("/var/tmp", constants.W_OK);
      parent = "/var/tmp";
    } catch {}
  }
  const folder = await realpath(await mkdtemp(path.join(parent, prefix)));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

async function makeRepository(folder: string): Promise<void> {
  await mkdir(folder, { recursive: true });
  await git(folder, "init", "--quiet", "--initial-branch", "main");
  await writeFile(path.join(folder, "f"), "hi\n");
  await mkdir(path.join(folder, ".vscode"));
  await writeFile(path.join(folder, ".vscode", "settings.json"), "{}\n");
  await git(folder, "add", "f", ".vscode");
  await git(folder, "commit", "--quiet", "--message", "one");
  await git(folder, "checkout", "--quiet", "-b", "other");
  await writeFile(path.join(folder, "f"), "other\n");
  await git(folder, "commit", "--quiet", "--all", "--message", "two");
  await git(folder, "checkout", "--quiet", "main");
}

/**
 * A TCP listener on loopback (`host`, 127.0.0.1 by default) that records connections and answers
 * each with {@link MARKER}.
 */
async function fakeRemote(host = "127.0.0.1"): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.on("error", () => {});
    socket.once("data", () => {
      const body = `${MARKER}\n`;
      socket.end(
        `HTTP/1.1 500 ${MARKER}\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\nx-marker: ${MARKER}\r\n\r\n${body}`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://${host}:${port}/repo.git`, connections: () => connections };
}

async function serve(
  options: Omit<Parameters<typeof createSandboxServer>[0], "root" | "token">,
): Promise<{ server: SandboxServer; provider: HttpStreamSandboxProvider }> {
  const server = await createSandboxServer({
    root: path.join(serverRoot, `server-${cleanups.length}`),
    token: TOKEN,
    ...options,
  });
  const provider = createHttpStreamSandboxProvider({ baseURL: server.url, auth });
  cleanups.unshift(async () => {
    provider.close();
    await server.close();
  });
  return { server, provider };
}

/**
 * The entries at the top of a workspace as its commands see them, but for empty folders: no
 * staging folder of the clone is left.
 */
async function entries(client: SandboxClient): Promise<string[]> {
  const all = await client.exec("ls -A");
  expect(all.stdout).not.toContain(".pleach-clone");
  // The session's kept outputs are outside the workspace (/run/pleach-output): nothing of them here.
  expect(all.stdout).not.toContain("pleach-output");
  const listed = await client.exec(
    "find . -mindepth 1 -maxdepth 1 ! -empty -printf '%f\\n' | sort",
  );
  return listed.stdout.split("\n").filter((name) => name !== "");
}

/** The error an acquire fails with. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("the acquire succeeded");
}

beforeAll(async () => {
  const folder = await makeTempDir("pleach-templates-");
  cleanups.push(folder.cleanup);
  serverRoot = folder.dir;
  repository = path.join(await sandboxVisibleFolder("pleach-template-repo-"), "repo");
  await makeRepository(repository);
});

afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("git templates", () => {
  it("with the network off, the host never connects; the error says so and echoes no remote", async () => {
    const remote = await fakeRemote();
    const { server, provider } = await serve({ gitProtocols: ["http", "https"] });
    const error = await failure(provider.acquire({ template: { git: remote.url } }));
    expect(isToolError(error) && error.code).toBe("COMMAND_FAILED");
    expect(error.message).toContain(JSON.stringify(remote.url));
    expect(error.message).toMatch(/exit status \d+/);
    expect(error.message).toContain("no network");
    expect(error.message).toContain("--network");
    expect(error.message).not.toContain(MARKER);
    expect(JSON.stringify((error as { details?: unknown }).details ?? {})).not.toContain(MARKER);
    // Nothing connected, not even late.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(remote.connections()).toBe(0);
    expect(server.sandboxCount).toBe(0);
  }, 30_000);

  it("with the network on, the clone's failure still echoes nothing the remote said", async () => {
    // The whole network (network: true) never reaches the host's loopback; a rule naming the
    // listener's address does, through the proxy. Not at 127.0.0.1, which NO_PROXY sends to the
    // sandbox's own loopback.
    const remote = await fakeRemote("127.0.0.2");
    const { provider } = await serve({
      gitProtocols: ["http"],
      network: { allowDomains: [new URL(remote.url).host] },
    });
    const error = await failure(provider.acquire({ template: { git: remote.url } }));
    expect(remote.connections()).toBeGreaterThan(0);
    expect(isToolError(error) && error.code).toBe("COMMAND_FAILED");
    expect(error.message).toContain(JSON.stringify(remote.url));
    expect(error.message).not.toContain(MARKER);
    expect(error.message).not.toContain("no network");
  }, 30_000);

  it("clones a file:// repository inside the sandbox, .git and protected entries included", async () => {
    const { provider } = await serve({ gitProtocols: ["file"] });
    const session = await provider.acquire({ template: { git: `file://${repository}` } });
    expect(await session.client.readFile("f")).toBe("hi\n");
    expect(await session.client.readFile(".vscode/settings.json")).toBe("{}\n");
    const log = await session.client.exec("git log --format=%s; git status --short");
    expect(log.stdout).toBe("one\n");
    expect(await entries(session.client)).toEqual([".git", ".vscode", "f"]);
    // The clone's .git is protected from commands like any workspace's.
    await expect(session.client.writeFile(".git/config", "[core]")).rejects.toMatchObject({
      code: "PROTECTED_PATH",
    });
    const other = await provider.acquire({
      template: { git: `file://${repository}`, ref: "other" },
    });
    expect(await other.client.readFile("f")).toBe("other\n");
    await session.release();
    await other.release();
  }, 30_000);

  it("clones for a read-only sandbox, which stays read-only", async () => {
    const { provider } = await serve({ gitProtocols: ["file"], mode: "read-only" });
    const session = await provider.acquire({ template: { git: `file://${repository}` } });
    expect(await session.client.readFile("f")).toBe("hi\n");
    expect(await entries(session.client)).toEqual([".git", ".vscode", "f"]);
    await expect(session.client.writeFile("g", "x")).rejects.toMatchObject({ code: "READ_ONLY" });
    const touched = await session.client.exec("touch g");
    expect(touched.exitCode).not.toBe(0);
    await session.release();
  }, 30_000);

  it("cannot clone what the sandbox cannot see: another sandbox's workspace, the host's /tmp", async () => {
    const { server, provider } = await serve({ gitProtocols: ["file"] });
    // A repository among the server's workspaces: the host could read it, a sandbox cannot.
    const sibling = await provider.acquire();
    const made = await sibling.client.exec(
      "git init -q -b main r && cd r && echo secret > s && git add s && git -c user.email=a@b -c user.name=a commit -qm one",
    );
    expect(made.exitCode).toBe(0);
    const inSibling = await failure(
      provider.acquire({ template: { git: `file://${path.join(sibling.root, "r")}` } }),
    );
    expect(isToolError(inSibling) && inSibling.code).toBe("COMMAND_FAILED");
    expect(inSibling.message).not.toContain("secret");
    const hostTmp = await makeTempDir("pleach-template-hidden-");
    cleanups.push(hostTmp.cleanup);
    await makeRepository(path.join(hostTmp.dir, "repo"));
    const inTmp = await failure(
      provider.acquire({ template: { git: `file://${path.join(hostTmp.dir, "repo")}` } }),
    );
    expect(isToolError(inTmp) && inTmp.code).toBe("COMMAND_FAILED");
    expect(server.sandboxCount).toBe(1);
    await sibling.release();
  }, 30_000);

  it("refuses before cloning: a scheme not allowed, control characters, a ref that is an option", async () => {
    const remote = await fakeRemote();
    const { provider } = await serve({ gitProtocols: ["file"], network: true });
    await expect(provider.acquire({ template: { git: remote.url } })).rejects.toMatchObject({
      code: "UNSUPPORTED",
    });
    await expect(
      provider.acquire({ template: { git: `file://${repository}\nx` } }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(
      provider.acquire({ template: { git: `file://${repository}`, ref: "--upload-pack=x" } }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    // A ref is data for git, never shell text.
    const error = await failure(
      provider.acquire({ template: { git: `file://${repository}`, ref: "x$(touch /tmp/p)'\"" } }),
    );
    expect(isToolError(error) && error.code).toBe("COMMAND_FAILED");
    expect(remote.connections()).toBe(0);
  }, 30_000);
});
