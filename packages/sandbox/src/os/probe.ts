import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import path from "node:path";
import { BUBBLEWRAP_PATH } from "./bubblewrap.js";
import type { BubblewrapFacts } from "./host-facts.js";
import { SANDBOX_EXEC_PATH } from "./seatbelt.js";

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
 * distributions can disable the unprivileged user namespaces bubblewrap relies on. The answer is
 * cached for the life of the process.
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
export function installHint(backend: "bubblewrap" | "seatbelt" | "none"): string {
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
  const base = [
    "--new-session",
    "--die-with-parent",
    "--unshare-user",
    "--cap-drop",
    "ALL",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--tmpfs",
    "/tmp",
    "--",
    "/bin/true",
  ];
  // What the sandbox uses beyond the base: an empty tmpfs with set permissions over placeholders.
  const withPermissions = ["--perms", "0555", "--tmpfs", "/run", ...base];
  const full = await run(BUBBLEWRAP_PATH, ["--disable-userns", ...withPermissions]);
  if (full.ok) return available({ disableUserNamespaces: true, tmpfsPermissions: true });
  // bubblewrap before 0.8 has no --disable-userns; it still confines, with nested namespaces
  // allowed. Before 0.5, --perms does not apply to --tmpfs: placeholders are bound read-only.
  if ((await run(BUBBLEWRAP_PATH, withPermissions)).ok) {
    return available({ disableUserNamespaces: false, tmpfsPermissions: true });
  }
  if ((await run(BUBBLEWRAP_PATH, base)).ok) {
    return available({ disableUserNamespaces: false, tmpfsPermissions: false });
  }
  return {
    backend: "bubblewrap",
    available: false,
    reason: `${BUBBLEWRAP_PATH} could not start a sandbox: ${full.detail}`,
  };
}

function available(features: Omit<BubblewrapFacts, "path">): BackendProbe {
  return {
    backend: "bubblewrap",
    available: true,
    bubblewrap: { path: BUBBLEWRAP_PATH, ...features },
  };
}

async function probeSeatbelt(): Promise<BackendProbe> {
  const untrusted = await untrustedReason(SANDBOX_EXEC_PATH);
  if (untrusted !== undefined) return { backend: "seatbelt", available: false, reason: untrusted };
  const result = await run(SANDBOX_EXEC_PATH, [
    "-p",
    "(version 1)(allow default)",
    "/usr/bin/true",
  ]);
  return result.ok
    ? { backend: "seatbelt", available: true }
    : {
        backend: "seatbelt",
        available: false,
        reason: `${SANDBOX_EXEC_PATH} could not start a sandbox: ${result.detail}`,
      };
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

function run(file: string, args: string[]): Promise<{ ok: boolean; detail: string }> {
  return new Promise((resolve) => {
    let stderr = "";
    const child = spawn(file, args, { stdio: ["ignore", "ignore", "pipe"], env: {} });
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.stderr.on("data", (chunk: Buffer) => {
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
