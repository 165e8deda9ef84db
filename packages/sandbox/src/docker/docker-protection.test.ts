// The Docker backend with a workspace bound from the host enforces the one protection policy, keeps
// the server's secrets from commands, and leaves nothing behind its owner. Against the real
// engine, for a provider as root (the container as the workspace's owner, root) and with a
// non-root provider user (`user: "1000:1000"`, the workspace theirs); as another user, for that
// user. Skips, saying why, where no engine answers.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { hostState } from "@pleach/core/testing";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { HttpSandboxSession } from "../http-provider.js";
import { MADE_BY_COMMAND } from "../made-by-commands/moved-aside.js";
import { attempt, verdicts } from "../os/test-support/fixture.js";
import { formatProcessKey, ownProcessKey } from "../process-key.js";
import type { DockerSandboxProviderOptions } from "./docker-options.js";
import { DOCKER_LABELS, dockerHostLabel } from "./docker-orphans.js";
import { createDockerSandboxProvider } from "./docker-provider.js";
import {
  containersLabelled,
  docker,
  dockerSkipReason,
  ensureSandboxImage,
  IMAGE,
  repo,
} from "./test-support/docker-engine.js";

const skipReason = dockerSkipReason();
const uid = process.getuid?.() ?? 0;
const asRoot = uid === 0;

interface Variant {
  label: string;
  user?: string;
  /** The uid:gid the workspace is given to (and the container runs as). */
  owner: [number, number];
}

const variants: Variant[] = asRoot
  ? [
      { label: "provider as root (container as the workspace's owner, root)", owner: [0, 0] },
      { label: "non-root provider user 1000:1000", user: "1000:1000", owner: [1000, 1000] },
    ]
  : [{ label: `provider as uid ${uid}`, owner: [uid, process.getgid?.() ?? uid] }];

// safe.directory: as root, the host's git would otherwise refuse (and so not run) a repository
// the variant's user owns, which would make "nothing ran" prove nothing.
const GIT = [
  "-c",
  "safe.directory=*",
  "-c",
  "user.name=pleach",
  "-c",
  "user.email=pleach@example.invalid",
];
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", [...GIT, ...args], { cwd, encoding: "utf8", stdio: "pipe" });

interface Fixture {
  /** Real path of the workspace: a repository with one commit, owned by the variant's owner. */
  root: string;
  /** A host folder outside the workspace where a planted payload would leave a marker. */
  markers: string;
  /** The provider's private folder parent, of this fixture alone. */
  socketParent: string;
  cleanup(): Promise<void>;
}

async function makeFixture(variant: Variant): Promise<Fixture> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-docker-ws-")));
  const markers = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-docker-marks-")));
  const socketParent = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-docker-s-")));
  git(root, "init", "-q");
  await writeFile(path.join(root, "app.txt"), "hello\n");
  git(root, "add", ".");
  git(root, "commit", "-q", "-m", "initial");
  if (asRoot) execFileSync("chown", ["-R", variant.owner.join(":"), root]);
  return {
    root,
    markers,
    socketParent,
    async cleanup() {
      for (const folder of [root, markers, socketParent]) {
        await rm(folder, { recursive: true, force: true });
      }
    },
  };
}

function providerOptions(variant: Variant, fixture: Fixture): DockerSandboxProviderOptions {
  return {
    image: IMAGE,
    socketParent: fixture.socketParent,
    ...(variant.user === undefined ? {} : { user: variant.user }),
  };
}

/** What the owner's git and shell would run on the host: each planted payload touches a marker. */
function runOwnersTools(root: string): void {
  git(root, "status", "--short");
  git(root, "checkout", "-q", "-b", `probe-${Date.now()}`);
  if (existsSync(path.join(root, ".bashrc"))) {
    execFileSync("bash", ["-c", `source ${JSON.stringify(path.join(root, ".bashrc"))}`]);
  }
}

describe.skipIf(skipReason !== undefined)("Docker backend with a bound host workspace", () => {
  const sessions: HttpSandboxSession[] = [];
  const fixtures: Fixture[] = [];

  beforeAll(() => ensureSandboxImage(), 300_000);
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((session) => session.release()));
    await Promise.all(fixtures.splice(0).map((fixture) => fixture.cleanup()));
  });

  it("the marker works: a planted core.fsmonitor and post-checkout hook run on the host's git", async () => {
    const fixture = await makeFixture(variants[0] as Variant);
    fixtures.push(fixture);
    const fsmonitor = path.join(fixture.markers, "fsmonitor");
    const hook = path.join(fixture.markers, "hook");
    git(fixture.root, "config", "core.fsmonitor", `touch ${fsmonitor}; false`);
    await writeFile(
      path.join(fixture.root, ".git/hooks/post-checkout"),
      `#!/bin/sh\ntouch ${hook}\n`,
      { mode: 0o755 },
    );
    runOwnersTools(fixture.root);
    expect(existsSync(fsmonitor)).toBe(true);
    expect(existsSync(hook)).toBe(true);
  });

  for (const variant of variants) {
    describe(variant.label, () => {
      it("a command cannot write .git/config, .git/hooks or .bashrc; the host's git then runs nothing planted", async () => {
        const fixture = await makeFixture(variant);
        fixtures.push(fixture);
        const provider = createDockerSandboxProvider(providerOptions(variant, fixture));
        const session = await provider.acquire({ workspace: fixture.root });
        sessions.push(session);
        const marker = path.join(fixture.markers, "planted");
        const protectedPaths = [".git", ".bashrc", ".profile", ".envrc"].map((name) =>
          path.join(fixture.root, name),
        );
        const before = await hostState(protectedPaths);
        const result = await session.client.exec(
          [
            attempt(`git config core.fsmonitor 'touch ${marker}; false'`),
            attempt(`printf '[core]\\n\\tfsmonitor = touch ${marker}\\n' >> .git/config`),
            attempt(
              `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout`,
            ),
            attempt("cp .git/hooks/pre-commit.sample .git/hooks/pre-commit"),
            attempt("mv .git .git-old"),
            // Missing: made here, moved aside when the command ends.
            `echo 'touch ${marker}' > .bashrc`,
            `echo 'touch ${marker}' >> .profile`,
            // What may be written, is.
            "echo made > made.txt && echo WROTE",
          ].join("\n"),
        );
        expect(verdicts(result.stdout)).toEqual(Array(5).fill("BLOCKED"));
        for (const name of [".bashrc", ".profile"]) {
          expect(existsSync(path.join(fixture.root, `${name}${MADE_BY_COMMAND}`)), name).toBe(true);
          await rm(path.join(fixture.root, `${name}${MADE_BY_COMMAND}`));
        }
        expect(result.stdout).toContain("WROTE");
        const made = await lstat(path.join(fixture.root, "made.txt"));
        expect([made.uid, made.gid]).toEqual(variant.owner);
        await session.release();
        expect(await hostState(protectedPaths)).toEqual(before);
        runOwnersTools(fixture.root);
        expect(existsSync(marker)).toBe(false);
      }, 60_000);

      it("the file route cannot write .git/config, .git/hooks or .bashrc either", async () => {
        const fixture = await makeFixture(variant);
        fixtures.push(fixture);
        const provider = createDockerSandboxProvider(providerOptions(variant, fixture));
        const session = await provider.acquire({ workspace: fixture.root });
        sessions.push(session);
        const marker = path.join(fixture.markers, "planted");
        const protectedPaths = [".git", ".bashrc"].map((name) => path.join(fixture.root, name));
        const before = await hostState(protectedPaths);
        const config = await readFile(path.join(fixture.root, ".git/config"), "utf8");
        for (const [file, content] of [
          [".git/config", `${config}[core]\n\tfsmonitor = touch ${marker}; false\n`],
          [".git/hooks/post-checkout", `#!/bin/sh\ntouch ${marker}\n`],
          [".bashrc", `touch ${marker}\n`],
          [".git/../.git/hooks/pre-commit", "x"],
        ] as const) {
          await expect(session.client.writeFile(file, content)).rejects.toMatchObject({
            code: "PROTECTED_PATH",
          });
        }
        await session.client.writeFile("ok.txt", "fine");
        expect(readFileSync(path.join(fixture.root, "ok.txt"), "utf8")).toBe("fine");
        expect(await hostState(protectedPaths)).toEqual(before);
        runOwnersTools(fixture.root);
        expect(existsSync(marker)).toBe(false);
      }, 60_000);

      it("a session job that makes .envrc or .vscode/tasks.json is stopped, and what it made is moved aside", async () => {
        const fixture = await makeFixture(variant);
        fixtures.push(fixture);
        const provider = createDockerSandboxProvider(providerOptions(variant, fixture));
        const session = await provider.acquire({ workspace: fixture.root });
        sessions.push(session);
        const jobs = session.client.jobs;
        if (jobs === undefined) throw new Error("the Docker backend's server runs no jobs");
        const job = await jobs.start(
          "echo up; sleep 1; while :; do echo pwned > .envrc; mkdir -p .vscode; echo '{}' > .vscode/tasks.json; done 2>/dev/null",
        );
        await jobs.output(job.jobId, { waitMs: 20_000, until: "up" });
        // The container's session sees a protected path appear and stops the job.
        await expect
          .poll(async () => (await jobs.list())[0]?.state, { timeout: 10_000 })
          .not.toBe("running");
        const fileAt = async (name: string) =>
          (await lstat(path.join(fixture.root, name)).catch(() => undefined))?.isFile() === true;
        await session.client.exec("true");
        // Nothing writes them any more: a look that lasts shows none back.
        for (let look = 0; look < 20; look += 1) {
          expect(await fileAt(".envrc")).toBe(false);
          expect(await fileAt(".vscode/tasks.json")).toBe(false);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(await fileAt(`.envrc${MADE_BY_COMMAND}`)).toBe(true);
        await session.release();
        expect(await fileAt(".envrc")).toBe(false);
        expect(await fileAt(".vscode/tasks.json")).toBe(false);
      }, 120_000);

      it("a command cannot read the token (no environ, no file) nor touch the socket folder, which is 0700", async () => {
        const fixture = await makeFixture(variant);
        fixtures.push(fixture);
        // A docker shim that keeps a copy of the token file the provider hands the container.
        const captured = path.join(fixture.markers, "token");
        const shim = path.join(fixture.markers, "docker-shim");
        await writeFile(
          shim,
          [
            "#!/bin/bash",
            'if [[ "$1" == run ]]; then',
            '  for arg in "$@"; do',
            `    case "$arg" in *:/run/pleach) cp "\${arg%:/run/pleach}/token" ${JSON.stringify(captured)} ;; esac`,
            "  done",
            "fi",
            'exec docker "$@"',
            "",
          ].join("\n"),
          { mode: 0o700 },
        );
        const provider = createDockerSandboxProvider({
          ...providerOptions(variant, fixture),
          docker: shim,
        });
        const session = await provider.acquire({ workspace: fixture.root });
        sessions.push(session);
        const token = (await readFile(captured, "utf8")).trim();
        expect(token).toMatch(/^[0-9a-f]{48}$/);

        const state = path.join(fixture.socketParent, `pleach-docker-${uid}`);
        const folder = path.join(state, session.id.replace(/^pleach-sandbox-/, ""));
        const stateInfo = await lstat(state);
        expect([stateInfo.isDirectory(), stateInfo.uid, stateInfo.mode & 0o777]).toEqual([
          true,
          uid,
          0o700,
        ]);
        const folderInfo = await lstat(folder);
        expect([folderInfo.isDirectory(), folderInfo.uid, folderInfo.mode & 0o777]).toEqual([
          true,
          variant.owner[0],
          0o700,
        ]);
        // The server removed the token file once read: only its socket is left, 0600.
        expect(await readdir(folder)).toEqual(["sandbox.sock"]);
        const socket = await lstat(path.join(folder, "sandbox.sock"));
        expect([socket.isSocket(), socket.uid, socket.mode & 0o777]).toEqual([
          true,
          variant.owner[0],
          0o600,
        ]);
        const socketBefore = await hostState([folder]);

        const result = await session.client.exec(
          [
            "for file in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat $file; echo; done 2>/dev/null",
            "ls -la /run /run/pleach /proc/1/fd /proc/1/root/run 2>&1",
            "cat /run/pleach/token 2>&1",
            "grep -rs . /run /tmp /dev/shm /etc /workspaces 2>/dev/null | head -c 1000000",
            attempt("rm /run/pleach/sandbox.sock"),
            attempt("ln -sf /tmp/evil.sock /run/pleach/sandbox.sock"),
            attempt("touch /run/pleach/planted"),
          ].join("\n"),
          { maxOutputBytes: 8 * 1024 * 1024 },
        );
        expect(result.stdout.length).toBeGreaterThan(100);
        expect(result.stdout).not.toContain(token);
        expect(result.stderr).not.toContain(token);
        // Those last attempts met a private /run of the command's own, not the socket folder.
        expect(await hostState([folder])).toEqual(socketBefore);
        // Seen from the host: no process of the container has the token in its environment.
        const pids = docker("top", session.id, "-eo", "pid").split("\n").slice(1);
        expect(pids.length).toBeGreaterThan(1);
        for (const pid of pids) {
          const environ = await readFile(`/proc/${pid.trim()}/environ`, "utf8").catch(() => "");
          expect(environ).not.toContain(token);
        }
        expect(docker("inspect", "--format", "{{json .Config.Env}}", session.id)).not.toContain(
          token,
        );
        // And the session still works, over the very socket.
        expect((await session.client.exec("echo still")).stdout).toBe("still\n");
      }, 60_000);

      it("after a SIGKILL of its owner, the container and its socket folder are gone by the next provider start, and the workspace is as it was", async () => {
        const fixture = await makeFixture(variant);
        fixtures.push(fixture);
        const before = await hostState([fixture.root]);
        const options = providerOptions(variant, fixture);
        // The owner: a node process holding a session with a command running that made a
        // protected path (which the server moves aside as it stops).
        const owner = spawn(
          process.execPath,
          [
            "--input-type=module",
            "-e",
            `
              const { createDockerSandboxProvider } = await import(${JSON.stringify(path.join(repo, "packages/sandbox/dist/index.js"))});
              const provider = createDockerSandboxProvider(${JSON.stringify(options)});
              const session = await provider.acquire({ workspace: ${JSON.stringify(fixture.root)} });
              session.client.exec("echo pwned > .envrc; sleep 60", { timeoutMs: 120000 }).catch(() => {});
              setTimeout(() => process.stdout.write(JSON.stringify({ id: session.id }) + "\\n"), 500);
              setInterval(() => {}, 1000);
            `,
          ],
          { stdio: ["ignore", "pipe", "inherit"] },
        );
        const id = await new Promise<string>((resolve, reject) => {
          owner.once("exit", (code) => reject(new Error(`the owner exited with ${code}`)));
          owner.stdout?.setEncoding("utf8").once("data", (text: string) => {
            resolve((JSON.parse(text) as { id: string }).id);
          });
        });
        const hex = id.replace(/^pleach-sandbox-/, "");
        const state = path.join(fixture.socketParent, `pleach-docker-${uid}`);
        expect(containersLabelled(`${DOCKER_LABELS.owner}`)).toContain(id);
        expect(existsSync(path.join(state, hex))).toBe(true);
        expect(existsSync(path.join(fixture.root, ".envrc"))).toBe(true);

        const killed = new Promise((resolve) => owner.once("exit", resolve));
        owner.kill("SIGKILL");
        await killed;

        const provider = createDockerSandboxProvider(options);
        const reaped = await provider.reapOrphans();
        expect(reaped.folders).toContain(path.join(state, hex));
        // Stopped on its own (the end of its stdin) or by the reaper: removed either way (--rm).
        await waitFor(() => !docker("ps", "--all", "--format", "{{.Names}}").includes(id));
        expect(await readdir(state)).not.toContain(hex);
        expect(await readdir(state)).not.toContain(`${hex}.owner`);
        // The server stopped cleanly: what the command made was moved aside, nothing else is left.
        await waitFor(() => existsSync(path.join(fixture.root, `.envrc${MADE_BY_COMMAND}`)));
        await rm(path.join(fixture.root, `.envrc${MADE_BY_COMMAND}`));
        expect(await hostState([fixture.root])).toEqual(before);
      }, 90_000);
    });
  }

  it("reaps the running containers and the socket folders of dead owners only", async () => {
    const socketParent = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-docker-s-")));
    const own = ownProcessKey();
    if (own === undefined) throw new Error("no /proc of our own pid namespace");
    // A process that is gone: its key, read while it ran.
    const child = spawn("sleep", ["0.3"]);
    const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8");
    const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] as string;
    await new Promise((resolve) => child.once("exit", resolve));
    const dead = formatProcessKey({ ...own, pid: child.pid as number, startTime });
    const alive = formatProcessKey(own);

    const started: string[] = [];
    const start = (owner: string) => {
      const name = `pleach-sandbox-reap-${owner === dead ? "dead" : "alive"}-${Date.now()}`;
      docker(
        "run",
        "--detach",
        "--rm",
        "--init",
        "--name",
        name,
        "--network",
        "none",
        "--label",
        `${DOCKER_LABELS.sandbox}=1`,
        "--label",
        `${DOCKER_LABELS.host}=${dockerHostLabel()}`,
        "--label",
        `${DOCKER_LABELS.owner}=${owner}`,
        "--entrypoint",
        "/usr/bin/sleep",
        IMAGE,
        "300",
      );
      started.push(name);
      return name;
    };
    const state = path.join(socketParent, `pleach-docker-${uid}`);
    await mkdir(state, { mode: 0o700 });
    const folders = { dead: "0123456789abcdef", alive: "fedcba9876543210" };
    await mkdir(path.join(state, folders.dead), { mode: 0o700 });
    await writeFile(path.join(state, `${folders.dead}.owner`), `${dead}\n`);
    await mkdir(path.join(state, folders.alive), { mode: 0o700 });
    await writeFile(path.join(state, `${folders.alive}.owner`), `${alive}\n`);
    try {
      const orphan = start(dead);
      const kept = start(alive);
      const provider = createDockerSandboxProvider({ image: IMAGE, socketParent });
      const reaped = await provider.reapOrphans();
      expect(reaped.containers).toContain(orphan);
      expect(reaped.containers).not.toContain(kept);
      expect(reaped.folders).toEqual([path.join(state, folders.dead)]);
      await waitFor(() => containersLabelled(`${DOCKER_LABELS.owner}=${dead}`).length === 0);
      expect(containersLabelled(`${DOCKER_LABELS.owner}=${alive}`)).toContain(kept);
      expect((await readdir(state)).sort()).toEqual([folders.alive, `${folders.alive}.owner`]);
    } finally {
      execFileSync("docker", ["rm", "--force", ...started], { stdio: "ignore" });
      await rm(socketParent, { recursive: true, force: true });
    }
  }, 90_000);

  it("refuses a private folder that is a link, another user's, or open to others", async () => {
    const socketParent = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-docker-s-")));
    const state = path.join(socketParent, `pleach-docker-${uid}`);
    const provider = createDockerSandboxProvider({ image: IMAGE, socketParent });
    try {
      await mkdir(state, { mode: 0o700 });
      await chmod(state, 0o777);
      await expect(provider.acquire()).rejects.toThrow(/mode 777/);
      await rm(state, { recursive: true });
      const elsewhere = await mkdtemp(path.join(os.tmpdir(), "pleach-docker-elsewhere-"));
      await symlink(elsewhere, state);
      await expect(provider.acquire()).rejects.toThrow(/symbolic link/);
      await rm(state);
      await rm(elsewhere, { recursive: true });
      if (asRoot) {
        await mkdir(state, { mode: 0o700 });
        await chown(state, 1000, 1000);
        await expect(provider.acquire()).rejects.toThrow(/belongs to uid 1000/);
      }
    } finally {
      await rm(socketParent, { recursive: true, force: true });
    }
  }, 60_000);
});

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

if (skipReason !== undefined) {
  describe("Docker backend with a bound host workspace", () => {
    it.skip(`skipped: ${skipReason}`, () => {});
  });
}
