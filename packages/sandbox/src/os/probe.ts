import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { BUBBLEWRAP_PATH } from "./bubblewrap.js";
import { type BubblewrapFacts, createHostFactsCache, gatherHostFacts } from "./host-facts.js";
import { feedInputs, inputPipes } from "./launcher-inputs.js";
import { SANDBOX_EXEC_PATH } from "./seatbelt.js";
import { type WrappedCommand, wrapCommand } from "./wrap-command.js";

/** Which OS sandbox works on this host, found by running one. */
export type BackendProbe =
  | { backend: "bubblewrap"; available: true; bubblewrap: BubblewrapFacts }
  | { backend: "seatbelt"; available: true }
  | { backend: "bubblewrap" | "seatbelt" | "none"; available: false; reason: string };

/** Options of {@link probeSandboxBackend}. */
export interface ProbeSandboxBackendOptions {
  /** The backend to try. */
  backend: "bubblewrap" | "seatbelt";
}

const probes = new Map<string, Promise<BackendProbe>>();

/**
 * Whether `backend` confines commands on this host: the launcher must be the trusted absolute one
 * (owned by root, writable by nobody else) and a trivial command must actually run under it, since
 * distributions can disable the unprivileged user namespaces bubblewrap relies on. For bubblewrap
 * that command is started the way every confined command is: with the argv, environment and
 * seccomp filter {@link wrapCommand} builds, so the probe cannot pass while real commands fail.
 * The answer is cached for the life of the process.
 */
export function probeSandboxBackend({
  backend,
}: ProbeSandboxBackendOptions): Promise<BackendProbe> {
  let probe = probes.get(backend);
  if (probe === undefined) {
    probe = backend === "bubblewrap" ? probeBubblewrap() : probeSeatbelt();
    probes.set(backend, probe);
  }
  return probe;
}

/** How to get a working OS sandbox, for the message of a `NO_SANDBOX` refusal. */
function installHint(backend: "bubblewrap" | "seatbelt" | "none"): string {
  if (backend === "bubblewrap") {
    return (
      "Install bubblewrap as root (apt-get install bubblewrap, dnf install bubblewrap, " +
      "pacman -S bubblewrap) and allow unprivileged user namespaces " +
      "(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also " +
      "sysctl kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap; " +
      "in a container, run it with --security-opt seccomp=unconfined or use a VM)."
    );
  }
  if (backend === "seatbelt") {
    return "sandbox-exec ships with macOS at /usr/bin/sandbox-exec; check that it is present.";
  }
  return "This platform has no supported OS sandbox (bubblewrap on Linux, Seatbelt on macOS).";
}

async function probeBubblewrap(): Promise<BackendProbe> {
  const untrusted = await untrustedReason(BUBBLEWRAP_PATH);
  if (untrusted !== undefined)
    return { backend: "bubblewrap", available: false, reason: untrusted };
  return withEmptyWorkspace(async (root) => {
    // bubblewrap before 0.8 has no --disable-userns; it still confines, with nested namespaces
    // allowed. Before 0.5, --perms does not apply to --tmpfs: emptied folders are remounted read-only.
    const candidates: Omit<BubblewrapFacts, "path">[] = [
      { disableUserNamespaces: true, tmpfsPermissions: true },
      { disableUserNamespaces: false, tmpfsPermissions: true },
      { disableUserNamespaces: false, tmpfsPermissions: false },
    ];
    let firstFailure: string | undefined;
    for (const features of candidates) {
      const bubblewrap = { path: BUBBLEWRAP_PATH, ...features };
      const outcome = await runWrapped(root, "bubblewrap", bubblewrap);
      if (outcome.ok) return { backend: "bubblewrap", available: true, bubblewrap };
      if (outcome.refused) {
        return { backend: "bubblewrap", available: false, reason: outcome.detail };
      }
      firstFailure ??= outcome.detail;
    }
    return {
      backend: "bubblewrap",
      available: false,
      reason: `${BUBBLEWRAP_PATH} could not start a sandbox: ${firstFailure}`,
    };
  });
}

async function probeSeatbelt(): Promise<BackendProbe> {
  const untrusted = await untrustedReason(SANDBOX_EXEC_PATH);
  if (untrusted !== undefined) return { backend: "seatbelt", available: false, reason: untrusted };
  return withEmptyWorkspace(async (root) => {
    const outcome = await runWrapped(root, "seatbelt");
    if (outcome.ok) return { backend: "seatbelt", available: true };
    return {
      backend: "seatbelt",
      available: false,
      reason: outcome.refused
        ? outcome.detail
        : `${SANDBOX_EXEC_PATH} could not start a sandbox: ${outcome.detail}`,
    };
  });
}

/** `probe` run with a fresh empty folder (its real path), removed after. */
async function withEmptyWorkspace(
  probe: (root: string) => Promise<BackendProbe>,
): Promise<BackendProbe> {
  const root = realpathSync.native(await mkdtemp(path.join(os.tmpdir(), "pleach-probe-")));
  try {
    return await probe(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * Run `true` in an empty workspace `root` exactly as a `workspace-write` command is run there: the
 * argv, environment and inputs (bubblewrap's seccomp filter) that {@link wrapCommand} builds for
 * `backend` with the probed `bubblewrap` features and the host's sockets masked. `refused` when pleach itself
 * refuses to build a sandbox here (no seccomp filter for this architecture, say).
 */
async function runWrapped(
  root: string,
  backend: "bubblewrap" | "seatbelt",
  bubblewrap?: BubblewrapFacts,
): Promise<{ ok: boolean; refused?: boolean; detail: string }> {
  let wrapped: WrappedCommand;
  try {
    const hostFacts = await gatherHostFacts({
      root,
      cache: createHostFactsCache(),
      ...(bubblewrap === undefined ? {} : { bubblewrap }),
    });
    wrapped = wrapCommand({
      command: "true",
      policy: { backend, mode: "workspace-write", cwd: root, network: false, env: {} },
      hostFacts,
    });
  } catch (error) {
    const reason = (error as ToolError).details?.reason;
    return {
      ok: false,
      refused: true,
      detail: typeof reason === "string" ? reason : (error as Error).message,
    };
  }
  return run(wrapped);
}

/** Why the launcher at `file` cannot be trusted, or `undefined` when it can. */
async function untrustedReason(file: string): Promise<string | undefined> {
  for (const target of [file, path.dirname(file), path.dirname(path.dirname(file))]) {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(target);
    } catch {
      return `${file} was not found`;
    }
    if (info.uid !== 0) return `${target} is not owned by root`;
    if ((info.mode & 0o022) !== 0) return `${target} is writable by users other than root`;
  }
  return undefined;
}

function run({
  file,
  args,
  env,
  inputs,
}: WrappedCommand): Promise<{ ok: boolean; detail: string }> {
  return new Promise((resolve) => {
    let stderr = "";
    const child = spawn(file, args, {
      stdio: ["ignore", "ignore", "pipe", ...inputPipes(inputs)],
      env,
    });
    feedInputs(child, inputs);
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString("utf8");
    });
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ ok: false, detail: error.message });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        ok: code === 0,
        detail: stderr.trim() || `exit code ${code ?? "none"}${signal ? `, signal ${signal}` : ""}`,
      });
    });
  });
}

/** The refusal of a confined `mode` where the OS sandbox `backend` cannot run, and why. */
export function noSandbox(
  mode: string,
  backend: "bubblewrap" | "seatbelt" | "none",
  reason: string,
): ToolError {
  return new ToolError(
    "NO_SANDBOX",
    `commands cannot run in ${mode} mode: ${reason}. ${installHint(backend)} ` +
      "Or use mode danger-full-access to run them unconfined, deliberately.",
    { details: { backend, reason } },
  );
}
