// The placeholders' registry: what a killed process leaves is removed by the next start, and only
// that; a folder the user made is never removed. Each case gets a fresh copy of the module (its
// state is per process) with a registry folder of its own (XDG_RUNTIME_DIR), and plays the other
// pleach processes with real processes: a `sleep` killed at once for a dead one, a running one for
// a live one.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { hostState, useTempDir } from "@pleach/core/testing";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { PLACEHOLDER_KEEPER } from "./placeholder-folder.js";
import type { ProtectedPath } from "./protection.js";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

type PlaceholdersModule = typeof import("./placeholders.js");

const linux = process.platform === "linux";
const bubblewrapSkip = await attackSuiteSkipReason();
const uid = process.getuid?.() ?? -1;

let root: string;
let runtime: string;
let registryFolder: string;
const savedRuntime = process.env.XDG_RUNTIME_DIR;
const children: ChildProcess[] = [];

beforeEach(async () => {
  root = await useTempDir({ prefix: "pleach-placeholders-" });
  runtime = await useTempDir({ prefix: "pleach-runtime-" });
  registryFolder = path.join(runtime, `pleach-${uid}`, "placeholders");
  process.env.XDG_RUNTIME_DIR = runtime;
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  if (savedRuntime === undefined) delete process.env.XDG_RUNTIME_DIR;
  else process.env.XDG_RUNTIME_DIR = savedRuntime;
});

/** A copy of the module with fresh state, as a new process would have it. */
async function freshProcess(): Promise<PlaceholdersModule> {
  vi.resetModules();
  return await import("./placeholders.js");
}

/** `<boot id>.<pid namespace>.<pid>.<start time>`: how a registry names its process. */
function processKey(pid: number): string {
  const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  const namespace = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1];
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  return `${bootId}.${namespace}.${pid}.${startTime}`;
}

/** A process that ran and is gone (SIGKILLed): its key. */
async function deadProcess(): Promise<string> {
  const child = spawn("sleep", ["60"]);
  await once(child, "spawn");
  const key = processKey(child.pid as number);
  child.kill("SIGKILL");
  await once(child, "exit");
  return key;
}

/** A process that runs until the case ends: its key. */
async function liveProcess(): Promise<string> {
  const child = spawn("sleep", ["60"]);
  children.push(child);
  await once(child, "spawn");
  return processKey(child.pid as number);
}

/** Make `target` as pleach makes a placeholder; its registry line. */
function makePlaceholder(target: string): string {
  mkdirSync(target, { mode: 0o555 });
  return identityLine(target);
}

function identityLine(target: string, extra: Record<string, unknown> = {}): string {
  const info = lstatSync(target);
  return JSON.stringify({
    path: target,
    device: info.dev,
    inode: info.ino,
    changedMs: info.ctimeMs,
    ...extra,
  });
}

function writeRegistry(key: string, lines: readonly string[], suffix = "jsonl"): string {
  mkdirSync(registryFolder, { recursive: true, mode: 0o700 });
  const file = path.join(registryFolder, `${key}.${suffix}`);
  writeFileSync(file, `pleach-placeholders 1\n${lines.join("\n")}\n`, { mode: 0o600 });
  return file;
}

function registryFiles(): string[] {
  return existsSync(registryFolder) ? readdirSync(registryFolder).sort() : [];
}

/** File-system times are coarse (a clock tick): a folder made right after another one removed at
 * the same path could get its inode and change time. A user is never that fast. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 30));

const missing = (target: string): ProtectedPath => ({ path: target, state: "missing" });
const directory = (target: string): ProtectedPath => ({ path: target, state: "directory" });

describe.skipIf(!linux)(`the placeholders' registry ${runningAs()}`, () => {
  it("records each placeholder while it stands, in a private folder, and forgets it after", async () => {
    const { acquirePlaceholders } = await freshProcess();
    const before = await hostState([root]);
    const envrc = path.join(root, ".envrc");
    const lease = acquirePlaceholders([missing(envrc)], { command: true });
    const [file, ...others] = registryFiles();
    expect(others).toEqual([]);
    expect(file).toBe(`${processKey(process.pid)}.jsonl`);
    const text = readFileSync(path.join(registryFolder, file as string), "utf8");
    expect(text).toBe(`pleach-placeholders 1\n${identityLine(envrc)}\n`);
    for (const folder of [registryFolder, path.dirname(registryFolder)]) {
      const info = lstatSync(folder);
      expect([info.uid, info.mode & 0o777]).toEqual([uid, 0o700]);
    }
    await lease.release();
    expect(registryFiles()).toEqual([]);
    expect(await hostState([root])).toEqual(before);
  });

  it("removes what a killed process left, at the next start, and only what is unchanged", async () => {
    const before = await hostState([root]);
    const vscode = path.join(root, ".vscode");
    const envrc = path.join(root, ".envrc");
    const idea = path.join(root, ".idea");
    const mcp = path.join(root, ".mcp.json");
    const lines = [vscode, envrc, idea, mcp].map(makePlaceholder);
    await tick();
    // The user removed one and made a folder of their own there (empty, read-only, same name);
    // something was put inside another.
    await rm(idea, { recursive: true });
    await mkdir(idea, { mode: 0o555 });
    chmodSync(mcp, 0o755);
    writeFileSync(path.join(mcp, "kept"), "");
    writeRegistry(await deadProcess(), lines);

    const { removeLeftoverPlaceholders } = await freshProcess();
    expect(removeLeftoverPlaceholders().sort()).toEqual([envrc, vscode]);
    expect(registryFiles()).toEqual([]);
    const state = await hostState([root]);
    expect(state[idea]).toMatch(/^dir 555/);
    expect(state[path.join(mcp, "kept")]).toMatch(/^file/);
    expect([existsSync(vscode), existsSync(envrc)]).toEqual([false, false]);

    // The first command of a process does it too, and makes afresh what it removed.
    await rm(mcp, { recursive: true });
    const again = makePlaceholder(vscode);
    writeRegistry(await deadProcess(), [again]);
    const fresh = await freshProcess();
    const lease = fresh.acquirePlaceholders([directory(vscode), directory(idea)]);
    expect(lease.protectedPaths).toEqual([missing(vscode), directory(idea)]);
    // Made afresh: another inode, or the same number given again (ext4 reuses a freed one at
    // once) with a later change time.
    const remade = lstatSync(vscode);
    const left = JSON.parse(again) as { inode: number; changedMs: number };
    expect(remade.ino !== left.inode || remade.ctimeMs > left.changedMs).toBe(true);
    await lease.release();
    await rm(idea, { recursive: true });
    expect(await hostState([root])).toEqual(before);
    expect(registryFiles()).toEqual([]);
  });

  it("reads a registry cut short as far as it goes, and one killed before a folder's identity", async () => {
    const envrc = path.join(root, ".envrc");
    const bashrc = path.join(root, ".bashrc");
    const profile = path.join(root, ".profile");
    const zshrc = path.join(root, ".zshrc");
    const complete = makePlaceholder(envrc);
    const zprofile = path.join(root, ".zprofile");
    // Recorded as about to be made, made at once and marked (its modification time twenty years
    // before the record): the process died before it could record the folder's identity.
    const recordedAt = Date.now();
    mkdirSync(bashrc, { mode: 0o555 });
    const mark = (recordedAt - 20 * 365 * 24 * 3_600_000) / 1000;
    utimesSync(bashrc, mark, mark);
    // Recorded as about to be made a minute after a folder of the user's stood there already.
    mkdirSync(profile, { mode: 0o555 });
    // Recorded as about to be made, and the user made a folder there at that very moment (or the
    // process died before marking its own): unmarked, so it is left.
    mkdirSync(zprofile, { mode: 0o555 });
    const file = writeRegistry(await deadProcess(), [
      complete,
      JSON.stringify({ path: bashrc, pendingSinceMs: recordedAt }),
      JSON.stringify({ path: profile, pendingSinceMs: recordedAt + 60_000 }),
      JSON.stringify({ path: zprofile, pendingSinceMs: recordedAt }),
      makePlaceholder(zshrc),
    ]);
    // Cut in the middle of the last line (a power loss while it was written).
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.slice(0, text.length - 12));
    const { removeLeftoverPlaceholders } = await freshProcess();
    expect(removeLeftoverPlaceholders().sort()).toEqual([bashrc, envrc]);
    expect([existsSync(profile), existsSync(zshrc), existsSync(zprofile)]).toEqual([
      true,
      true,
      true,
    ]);
    expect(registryFiles()).toEqual([]);
    // Not a registry of a pleach process, or not one at all: left or dropped, nothing removed.
    writeFileSync(path.join(registryFolder, "notes.txt"), "x");
    writeRegistry(await deadProcess(), ["{"]);
    writeFileSync(path.join(registryFolder, `${await deadProcess()}.jsonl`), "garbage\n");
    expect(removeLeftoverPlaceholders()).toEqual([]);
    expect(registryFiles()).toEqual(["notes.txt"]);
    expect([existsSync(profile), existsSync(zshrc)]).toEqual([true, true]);
  });

  it("leaves the registries of live processes, and what a live process uses", async () => {
    const envrc = path.join(root, ".envrc");
    const vscode = path.join(root, ".vscode");
    const envrcLine = makePlaceholder(envrc);
    const vscodeLine = makePlaceholder(vscode);
    const live = writeRegistry(await liveProcess(), [envrcLine]);
    // A dead process made .vscode; a live one still uses it (it adopted it).
    writeRegistry(await deadProcess(), [vscodeLine]);
    const user = writeRegistry(await liveProcess(), [vscodeLine]);
    const { removeLeftoverPlaceholders } = await freshProcess();
    expect(removeLeftoverPlaceholders()).toEqual([]);
    expect(registryFiles()).toEqual([path.basename(live), path.basename(user)].sort());
    expect([existsSync(envrc), existsSync(vscode)]).toEqual([true, true]);
  });

  it("adopts a live process's placeholder, and the last process to use one removes it", async () => {
    const before = await hostState([root]);
    const envrc = path.join(root, ".envrc");
    const other = writeRegistry(await liveProcess(), [makePlaceholder(envrc)]);
    const { acquirePlaceholders, removeIdlePlaceholders, livePlaceholders } = await freshProcess();
    const lease = acquirePlaceholders([directory(envrc)], { idleMs: 60_000 });
    expect(lease.protectedPaths).toEqual([missing(envrc)]);
    expect(livePlaceholders()).toEqual([envrc]);
    await lease.release();
    // The other process still uses it: handed over, not removed.
    removeIdlePlaceholders();
    expect(existsSync(envrc)).toBe(true);
    const ours = path.join(registryFolder, `${processKey(process.pid)}.jsonl`);
    expect(readFileSync(ours, "utf8")).toContain('"handedOver":true');
    // The other process lets go of it (without removing it, since we used it then).
    writeFileSync(other, `pleach-placeholders 1\n${identityLine(envrc, { handedOver: true })}\n`);
    removeIdlePlaceholders();
    expect(existsSync(envrc)).toBe(false);
    expect(existsSync(ours)).toBe(false);
    await rm(other);
    expect(await hostState([root])).toEqual(before);
  });

  it("covers a protected path inside a placeholder it holds with that placeholder", async () => {
    const before = await hostState([root]);
    const config = path.join(root, ".config");
    const { acquirePlaceholders, removeIdlePlaceholders } = await freshProcess();
    const first = acquirePlaceholders([missing(config)], { idleMs: 60_000 });
    const changed = lstatSync(config).ctimeMs;
    // The next command: .config is there now, so the paths below it are the missing ones.
    const second = acquirePlaceholders([
      missing(path.join(config, "mise")),
      missing(path.join(config, "mise.toml")),
    ]);
    expect(second.protectedPaths).toEqual([{ ...missing(config), path: config }]);
    expect(readdirSync(config)).toEqual([PLACEHOLDER_KEEPER]);
    expect(lstatSync(config).ctimeMs).toBe(changed);
    await second.release();
    await first.release();
    removeIdlePlaceholders();
    expect(await hostState([root])).toEqual(before);
  });

  it("does not use a registry folder others could write, or a link", async () => {
    const envrc = path.join(root, ".envrc");
    mkdirSync(path.dirname(registryFolder), { mode: 0o700 });
    mkdirSync(registryFolder, { mode: 0o700 });
    chmodSync(registryFolder, 0o770);
    const planted = writeRegistry(await deadProcess(), [makePlaceholder(envrc)]);
    chmodSync(registryFolder, 0o770);
    const { removeLeftoverPlaceholders, acquirePlaceholders } = await freshProcess();
    expect(removeLeftoverPlaceholders()).toEqual([]);
    expect(existsSync(envrc)).toBe(true);
    const vscode = path.join(root, ".vscode");
    const lease = acquirePlaceholders([missing(vscode)]);
    expect(readdirSync(registryFolder)).toEqual([path.basename(planted)]);
    await lease.release();
    // Unrecorded, it may be another process's mount point: it stays, failing closed.
    expect(existsSync(vscode)).toBe(true);

    await rm(path.dirname(registryFolder), { recursive: true });
    const elsewhere = await useTempDir({ prefix: "pleach-elsewhere-" });
    symlinkSync(elsewhere, path.dirname(registryFolder));
    const linked = await freshProcess();
    const again = linked.acquirePlaceholders([missing(vscode)]);
    expect(readdirSync(elsewhere)).toEqual([]);
    await again.release();
  });
});

describe.skipIf(bubblewrapSkip !== undefined)(
  `placeholders seen from a confined command ${runningAs()}${bubblewrapSkip ? ` (skipped: ${bubblewrapSkip})` : ""}`,
  () => {
    for (const warm of [false, true]) {
      it(`names them in PLEACH_PLACEHOLDERS${warm ? ", in a warm sandbox" : ""}, and only them`, async () => {
        const before = await hostState([root]);
        await mkdir(path.join(root, ".idea"), { mode: 0o555 });
        const wrapper = createCommandWrapper({ placeholderIdleMs: warm ? 60_000 : 0 });
        const sandbox = await createLocalSandbox({
          root,
          mode: "workspace-write",
          commandWrapper: wrapper,
        });
        const probe = "if [ \"$(cat /proc/1/comm)\" = perl ]; then echo '[warm]'; fi";
        const show = `${probe}; printf "%s\\n" "$PLEACH_PLACEHOLDERS"; echo .; ls -a`;
        let result = await sandbox.exec(show, { env: { PLEACH_PLACEHOLDERS: "/etc" } });
        for (let attempt = 0; warm && !result.stdout.startsWith("[warm]"); attempt += 1) {
          // Commands in a burst run in the warm sandbox once it is up.
          if (attempt > 200) throw new Error("no warm sandbox after 200 commands");
          result = await sandbox.exec(show, { env: { PLEACH_PLACEHOLDERS: "/etc" } });
        }
        expect(result.stdout.startsWith("[warm]")).toBe(warm);
        const [named, listed] = result.stdout.split("\n.\n");
        const placeholders = (named ?? "").replace("[warm]\n", "").trim().split("\n");
        expect(placeholders.length).toBeGreaterThan(5);
        expect(placeholders).toContain(path.join(root, ".envrc"));
        expect(placeholders).toContain(path.join(root, ".vscode"));
        expect(placeholders).not.toContain(path.join(root, ".idea"));
        expect(placeholders).not.toContain("/etc");
        // They are still there for `ls -a` (what the README says).
        expect(listed).toContain(".envrc\n");
        expect(listed).toContain(".idea\n");
        await wrapper.close?.();
        await rm(path.join(root, ".idea"), { recursive: true });
        expect(await hostState([root])).toEqual(before);
      });
    }

    it("never removes a placeholder when the state folder is squatted: another process's session job never writes .envrc", async () => {
      // Another local user made the state folder first: as root, one of `nobody`'s; otherwise
      // (no other uid to give it) one open to others, refused the same way.
      const squatted = path.join(runtime, `pleach-${uid}`);
      mkdirSync(squatted, { mode: 0o777 });
      chmodSync(squatted, 0o777);
      if (uid === 0) chownSync(squatted, 65534, 65534);
      const envrc = path.join(root, ".envrc");
      // Process B: one of its commands holds the placeholder at .envrc.
      const other = await freshProcess();
      const lease = other.acquirePlaceholders([missing(envrc)], { command: true });
      expect(lstatSync(envrc).isDirectory()).toBe(true);
      // Process A: a session whose job keeps trying to write .envrc over it.
      const session = await createLocalSandbox({ root, session: true });
      try {
        const jobs = session.jobs;
        if (jobs === undefined) throw new Error("the local sandbox offers no jobs");
        const job = await jobs.start(
          "while :; do (echo pwned > .envrc) 2>/dev/null; echo try; sleep 0.05; done",
        );
        const started = await jobs.output(job.jobId, { waitMs: 10_000, until: "try\n" });
        // B's command ends, and B lets go of what it holds (as at exit), then starts again.
        await lease.release();
        other.removeIdlePlaceholders();
        expect((await freshProcess()).removeLeftoverPlaceholders()).toEqual([]);
        const after = await jobs.output(job.jobId, {
          since: started.next,
          waitMs: 10_000,
          until: "(try\n){5}",
        });
        expect(after.matched).toBe(true);
        expect(lstatSync(envrc).isDirectory()).toBe(true);
        expect(readdirSync(envrc)).toEqual([PLACEHOLDER_KEEPER]);
      } finally {
        await session.close();
      }
      expect(lstatSync(envrc).isDirectory()).toBe(true);
    });

    it("stays read-only over the placeholders listed (an attempt to create the path fails)", async () => {
      const sandbox = await createLocalSandbox({ root, mode: "workspace-write" });
      const result = await sandbox.exec(
        'for p in $PLEACH_PLACEHOLDERS; do : > "$p/x" 2>/dev/null && echo "WROTE $p"; done; echo done',
      );
      expect(result.stdout).toBe("done\n");
    });
  },
);
