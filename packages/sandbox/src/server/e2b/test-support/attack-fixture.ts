// The OS sandbox's attack suites (os/test-support/*-attacks.ts) over the E2B face: the same case
// bodies, each against a fixture whose commands are the e2b SDK's `commands.run` on a sandbox of
// `createSandboxServer({ protocol: "e2b" })`, whose workspace is the fixture's folder
// (`workspacePath`), and whose writes are envd's `/files`. One server per sandbox mode and network
// rule, a sandbox per command, killed after it, so that the cases compare the host once the
// sandbox is done. Commands go over envd's process service as the SDK sends them (JSON Connect,
// the same headers) from a Connect client of this file, which reads the pleach code a refusal
// carries in its metadata (the SDK keeps only its message); e2b-sdk.test.ts drives the SDK itself.
import { mkdtemp, readdir, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ToolError, type ToolErrorCode } from "@pleach/core";
import type { ExecResult } from "@pleach/core/sandbox";
import { hostState } from "@pleach/core/testing";
import { Sandbox } from "e2b";
import { afterAll, afterEach, beforeAll, beforeEach, describe, it } from "vitest";
import type { NetworkOption } from "../../../network/domain-rules.js";
import { createCommandWrapper } from "../../../os/create-command-wrapper.js";
import { type AttackFixture, populateAttackFolders } from "../../../os/test-support/fixture.js";
import type { AttackTest } from "../../../os/test-support/suite.js";
import { createSandboxServer, type SandboxServer } from "../../sandbox-server.js";
import { Process } from "../gen/process/process_pb.js";

const TOKEN = "e2b-attack-token-0123456789abcdef";

/** Options of {@link describeE2BAttacks}. */
export interface E2BAttackOptions {
  /** Why the suites cannot run here (skipped, saying so), or `undefined`. */
  skipReason: string | undefined;
  /** Cases that cannot apply over the E2B face, by name, with the reason; a stale name fails. */
  skip?: Readonly<Record<string, string>>;
}

/** Run `command` through envd's `Start`, as `commands.run` does, to its end event. */
async function runThroughEnvd(
  server: SandboxServer,
  sandbox: Sandbox,
  command: string,
  options: { env?: Record<string, string>; cwd?: string },
): Promise<Pick<ExecResult, "exitCode" | "stdout" | "stderr" | "sandboxNotes">> {
  const transport = createConnectTransport({
    baseUrl: server.url.href,
    httpVersion: "1.1",
    useBinaryFormat: false,
    interceptors: [
      (next) => (request) => {
        request.header.set("x-access-token", TOKEN);
        request.header.set("e2b-sandbox-id", sandbox.sandboxId);
        return next(request);
      },
    ],
  });
  const events = createClient(Process, transport).start(
    {
      process: {
        cmd: "/bin/bash",
        args: ["-l", "-c", command],
        envs: options.env ?? {},
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      },
    },
    { timeoutMs: 20_000 },
  );
  const decoder = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  const output = { stdout: "", stderr: "" };
  try {
    for await (const { event } of events) {
      const current = event?.event;
      if (
        current?.case === "data" &&
        (current.value.output.case === "stdout" || current.value.output.case === "stderr")
      ) {
        const stream = current.value.output.case;
        output[stream] += decoder[stream].decode(current.value.output.value, { stream: true });
      }
      if (current?.case === "end") {
        // The sandbox's notes arrive as the end event's error lines.
        const notes = current.value.error?.split("\n") ?? [];
        return {
          exitCode: current.value.exited ? current.value.exitCode : null,
          ...output,
          ...(notes.length === 0 ? {} : { sandboxNotes: notes }),
        };
      }
    }
  } catch (error) {
    const code = error instanceof ConnectError ? error.metadata.get("pleach-code") : null;
    if (code !== null)
      throw new ToolError(code as ToolErrorCode, (error as ConnectError).rawMessage);
    throw error;
  }
  throw new Error("the process stream ended without an end event");
}

/** Write through envd's `/files`, throwing the pleach code it answers with, as a client would. */
async function writeThroughFiles(
  server: SandboxServer,
  sandbox: Sandbox,
  file: string,
  content: string,
): Promise<void> {
  const url = new URL("/files", server.url);
  url.searchParams.set("path", file);
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "x-access-token": TOKEN,
      "e2b-sandbox-id": sandbox.sandboxId,
      "content-type": "application/octet-stream",
    },
    body: content,
  });
  if (response.ok) return;
  const { message, pleachCode } = (await response.json()) as {
    message: string;
    pleachCode: ToolErrorCode;
  };
  throw new ToolError(pleachCode, message);
}

/** Declare an attack suite's cases over the E2B face of a local sandbox server. */
export function describeE2BAttacks(
  title: string,
  cases: (fixture: AttackFixture, it: AttackTest) => void,
  { skipReason, skip = {} }: E2BAttackOptions,
): void {
  const skipped = skipReason === undefined ? "" : ` (skipped: ${skipReason})`;
  describe.skipIf(skipReason !== undefined)(`${title}${skipped}`, () => {
    let root = "";
    let serverRoot = "";
    const servers = new Map<string, Promise<SandboxServer>>();
    const fixture = {} as AttackFixture;
    const live: Sandbox[] = [];

    const serverFor = (mode: AttackFixtureMode, network: NetworkOption) => {
      const key = JSON.stringify([mode, network]);
      let server = servers.get(key);
      if (server === undefined) {
        server = createSandboxServer({
          root: path.join(serverRoot, String(servers.size)),
          token: TOKEN,
          protocol: "e2b",
          mode,
          network,
          workspacePath: () => root,
          commandWrapper: createCommandWrapper({ warmSandbox: false }),
        });
        servers.set(key, server);
      }
      return server;
    };
    const connect = async (
      mode: AttackFixtureMode = "workspace-write",
      network: NetworkOption = false,
    ) => {
      const server = await serverFor(mode, network);
      const url = server.url.href.replace(/\/$/, "");
      const sandbox = await Sandbox.create({ apiKey: TOKEN, apiUrl: url, sandboxUrl: url });
      return { server, sandbox };
    };
    const done = async (sandbox: Sandbox) => {
      await sandbox.kill();
    };

    beforeAll(async () => {
      root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-e2b-attack-")));
      serverRoot = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-e2b-servers-")));
    });
    beforeEach(async () => {
      for (const name of await readdir(root))
        await rm(path.join(root, name), { recursive: true, force: true });
      const hostTemporary = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-host-")));
      const outside = await realpath(await mkdtemp("/var/tmp/pleach-outside-"));
      await populateAttackFolders({ root, outside, hostTemporary });
      Object.assign(fixture, {
        root,
        outside,
        hostTemporary,
        // Its server's wrapper has default options: no git writes.
        gitWrites: false,
        state: (extraPaths: readonly string[] = []) =>
          hostState([root, outside, hostTemporary, ...extraPaths]),
        async client() {
          const { server, sandbox } = await connect();
          live.push(sandbox);
          return {
            exec: async (command: string) => ({
              ...(await runThroughEnvd(server, sandbox, command, {})),
              durationMs: 0,
              timedOut: false,
              truncated: false,
            }),
            writeFile: (file: string, content: string) =>
              writeThroughFiles(server, sandbox, file, content),
          };
        },
        async run(command, { mode, network, env, hostEnvironment, cwd, stdin, wrapper } = {}) {
          if (hostEnvironment !== undefined || wrapper !== undefined) {
            throw new Error(
              "the server has its own environment and wrapper: skip the case over the E2B face",
            );
          }
          if (stdin !== undefined && stdin !== "") {
            throw new Error("envd's Start takes no stdin data: skip the case over the E2B face");
          }
          const { server, sandbox } = await connect(mode, network);
          try {
            return await runThroughEnvd(server, sandbox, command, {
              ...(env === undefined ? {} : { env }),
              ...(cwd === undefined ? {} : { cwd }),
            });
          } finally {
            await done(sandbox);
          }
        },
        async cleanup() {
          for (const sandbox of live.splice(0)) await done(sandbox);
          await rm(outside, { recursive: true, force: true });
          await rm(hostTemporary, { recursive: true, force: true });
        },
      } satisfies AttackFixture);
    });
    afterEach(async () => {
      await fixture.cleanup();
    });
    afterAll(async () => {
      for (const server of await Promise.allSettled(servers.values())) {
        if (server.status === "fulfilled") await server.value.close();
      }
      servers.clear();
      if (root !== "") await rm(root, { recursive: true, force: true });
      if (serverRoot !== "") await rm(serverRoot, { recursive: true, force: true });
    }, 60_000);

    const skippedNames = new Set<string>();
    cases(fixture, (name, body, caseSkipReason) => {
      const reason = skip[name] ?? caseSkipReason;
      if (reason === undefined) {
        it(name, body, 60_000);
        return;
      }
      if (skip[name] !== undefined) skippedNames.add(name);
      it.skip(`${name} (skipped over the E2B face: ${reason})`, body);
    });
    const stale = Object.keys(skip).filter((name) => !skippedNames.has(name));
    if (stale.length > 0)
      throw new Error(`no such case to skip over the E2B face: ${stale.join("; ")}`);
  });
}

type AttackFixtureMode = NonNullable<NonNullable<Parameters<AttackFixture["run"]>[1]>["mode"]>;
