// The OS sandbox's attack suites (os/test-support/*-attacks.ts) over the Docker backend: the same
// case bodies, each against a fixture whose commands run through a Docker session's client `exec`
// in a container bound to the fixture's workspace. One container per sandbox mode (and network),
// started on first use and released after each command: its sandbox is a session, and the cases
// compare the host once the sandbox is done. The workspace is one folder emptied and filled again before each case
// (the bind mount holds that folder), so each case starts from a fresh fixture.
import { execFileSync } from "node:child_process";
import { chown, mkdtemp, readdir, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { SandboxMode } from "@pleach/core";
import { hostState } from "@pleach/core/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, it } from "vitest";
import type { HttpSandboxSession } from "../../http-provider.js";
import { type AttackFixture, populateAttackFolders } from "../../os/test-support/fixture.js";
import type { AttackTest } from "../../os/test-support/suite.js";
import { createDockerSandboxProvider } from "../docker-provider.js";
import { ensureSandboxImage, IMAGE } from "./docker-engine.js";

/** Options of {@link describeDockerAttacks}. */
export interface DockerAttackOptions {
  /** Why Docker cannot run here (the suite is then skipped, saying so), or `undefined`. */
  skipReason: string | undefined;
  /**
   * The containers' user, `uid:gid`, for a provider running as root: the workspace is handed to
   * it before each command and each look at the host. By default the workspace's owner.
   */
  user?: string;
  /**
   * Cases that cannot apply over Docker, by name, with the reason, which the skipped case's name
   * carries. A name that matches no case fails the file, so that no skip outlives its case.
   */
  skip?: Readonly<Record<string, string>>;
}

/** An attack fixture over a container, which also hands out the container's session. */
export interface DockerAttackFixture extends AttackFixture {
  /** The session whose client runs the fixture's commands in `mode` (started on first use). */
  session(mode?: SandboxMode): Promise<HttpSandboxSession>;
}

const MISSING = "pleach-missing-program:";
/**
 * Put before each command: a program the image lacks, run by name, says so on the command's
 * stderr (fd 9, past the cases' own redirections), and the run fails, so that an attempt cannot
 * pass as blocked merely because its program is missing. (Absolute paths, `/usr/bin/python3`, do
 * not reach bash's handler: those cases are in the skip lists.)
 */
const MISSING_PROGRAM_GUARD = [
  `command_not_found_handle() { printf '${MISSING} %s\\n' "$1" >&9; return 127; }`,
  "exec 9>&2",
  "",
].join("\n");

/**
 * Declare an attack suite's cases (an `AttackCases`, or cases that also use the container's
 * session) over the Docker backend with a bound workspace. Runs take the local fixture's options,
 * except that a `hostEnvironment` throws (the container's server never sees the host's
 * environment: such cases are skipped) and a `wrapper` is not used: the server has one wrapper of
 * its own, with default options, that all of a container's runs share (cases whose wrapper has
 * other options are skipped).
 */
export function describeDockerAttacks(
  title: string,
  cases: (fixture: DockerAttackFixture, it: AttackTest) => void,
  { skipReason, user, skip = {} }: DockerAttackOptions,
): void {
  const skipped = skipReason === undefined ? "" : ` (skipped: ${skipReason})`;
  describe.skipIf(skipReason !== undefined)(`${title}${skipped}`, () => {
    let root = "";
    const sessions = new Map<string, Promise<HttpSandboxSession>>();
    const fixture = {} as DockerAttackFixture;
    const clients: HttpSandboxSession[] = [];

    /** Give what the host made in the workspace to the containers' user (theirs stays as it is). */
    const handOver = () => {
      if (user === undefined) return;
      const [uid] = user.split(":");
      execFileSync("find", [
        root,
        "!",
        "-uid",
        uid as string,
        "-exec",
        "chown",
        "-h",
        user,
        "{}",
        "+",
      ]);
    };
    const sessionFor = (mode: SandboxMode, network: boolean) => {
      const key = `${mode} ${network}`;
      let session = sessions.get(key);
      if (session === undefined) {
        const provider = createDockerSandboxProvider({
          image: IMAGE,
          mode,
          network,
          ...(user === undefined ? {} : { user }),
        });
        session = provider.acquire({ workspace: root });
        sessions.set(key, session);
      }
      return session;
    };

    /** The host's git, which the cases run, trusts the workspace that the containers' user owns. */
    const trust = {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "safe.directory",
      GIT_CONFIG_VALUE_0: "*",
    };
    const saved = Object.fromEntries(Object.keys(trust).map((key) => [key, process.env[key]]));

    beforeAll(async () => {
      if (user !== undefined) Object.assign(process.env, trust);
      ensureSandboxImage();
      root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-docker-attack-")));
    }, 300_000);
    beforeEach(async () => {
      for (const name of await readdir(root)) {
        await rm(path.join(root, name), { recursive: true, force: true });
      }
      // Back to this process's user, whose git refuses a repository another user owns.
      await chown(root, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
      const hostTemporary = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-host-")));
      const outside = await realpath(await mkdtemp("/var/tmp/pleach-outside-"));
      await populateAttackFolders({ root, outside, hostTemporary });
      Object.assign(fixture, {
        root,
        outside,
        hostTemporary,
        // Its server's wrapper has default options: no git writes.
        gitWrites: false,
        async session(mode = "workspace-write") {
          handOver();
          return sessionFor(mode, false);
        },
        async client() {
          // A session of its own, released when the case ends.
          handOver();
          const session = await createDockerSandboxProvider({
            image: IMAGE,
            mode: "workspace-write",
            ...(user === undefined ? {} : { user }),
          }).acquire({ workspace: root });
          clients.push(session);
          return session.client;
        },
        async state(extraPaths: readonly string[] = []) {
          handOver();
          return hostState([root, outside, hostTemporary, ...extraPaths]);
        },
        async run(command, { mode, network, env, hostEnvironment, cwd, stdin } = {}) {
          if (hostEnvironment !== undefined) {
            throw new Error("the container's server never sees a host environment: skip the case");
          }
          if (typeof network === "object") {
            throw new Error("the Docker sandbox refuses domain lists: skip the case");
          }
          handOver();
          const key = `${mode ?? "workspace-write"} ${network ?? false}`;
          const session = await sessionFor(mode ?? "workspace-write", network ?? false);
          let result: Awaited<ReturnType<HttpSandboxSession["client"]["exec"]>>;
          try {
            result = await session.client.exec(`${MISSING_PROGRAM_GUARD}${command}`, {
              timeoutMs: 20_000,
              ...(env === undefined ? {} : { env }),
              ...(cwd === undefined ? {} : { cwd }),
              ...(stdin === undefined ? {} : { stdin }),
            });
          } finally {
            // End the session (the next command gets a container of its own), then compare.
            sessions.delete(key);
            await session.release();
          }
          const missing = result.stderr.split("\n").filter((line) => line.startsWith(MISSING));
          if (missing.length > 0) {
            throw new Error(
              `the image lacks ${missing.map((line) => line.slice(MISSING.length).trim()).join(", ")}: skip the case over Docker`,
            );
          }
          const { exitCode, stdout, stderr } = result;
          return { exitCode, stdout, stderr };
        },
        async cleanup() {
          for (const session of clients.splice(0)) await session.release();
          await rm(outside, { recursive: true, force: true });
          await rm(hostTemporary, { recursive: true, force: true });
        },
      } satisfies DockerAttackFixture);
    });
    afterEach(async () => {
      await fixture.cleanup();
    });
    afterAll(async () => {
      const started = await Promise.allSettled(sessions.values());
      sessions.clear();
      for (const session of started) {
        if (session.status === "fulfilled") await session.value.release();
      }
      if (root !== "") await rm(root, { recursive: true, force: true });
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }, 60_000);

    const skippedNames = new Set<string>();
    cases(fixture, (name, body) => {
      const reason = skip[name];
      if (reason === undefined) {
        it(name, body, 60_000);
        return;
      }
      skippedNames.add(name);
      it.skip(`${name} (skipped over Docker: ${reason})`, body);
    });
    const stale = Object.keys(skip).filter((name) => !skippedNames.has(name));
    if (stale.length > 0) throw new Error(`no such case to skip over Docker: ${stale.join("; ")}`);
  });
}
