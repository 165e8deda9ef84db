import path from "node:path";
import { ToolError } from "@pleach/core";
import { cacheMountArguments } from "../caches/caches.js";
import {
  forwardingShell,
  policyProxyEnvironment,
  SANDBOX_PROXY_FOLDER,
} from "../network/proxy-forwarder.js";
import { isInside } from "../paths.js";
import type { HiddenPath } from "../policy/hidden-reads.js";
import { requestedEnvironment } from "../policy/protected-entries.js";
import { type ReadView, visibleInView } from "../policy/read-view.js";
import { SHELL } from "./command-text.js";
import type { HostFacts } from "./host-facts.js";
import { HIDDEN_TREES } from "./host-sockets.js";
import type { SandboxPolicy } from "./sandbox-policy.js";

/** The only bubblewrap pleach runs: never one found on `PATH` or in the workspace. */
export const BUBBLEWRAP_PATH = "/usr/bin/bwrap";
/**
 * The file descriptor bubblewrap reads the sandbox's seccomp filter from (`seccompFilter`): whoever
 * spawns the argv gives it as a pipe holding the filter (`CommandInvocation.inputs`). Without it
 * bubblewrap refuses to start, so a launch that forgets the filter fails rather than runs unfiltered.
 */
const SECCOMP_FD = 3;
/** Where a command too long for an argument is read from inside the sandbox (`shellCommand`). */
export const BUBBLEWRAP_COMMAND_FD = SECCOMP_FD + 1;

/** Options of {@link bubblewrapArguments}. */
export interface BubblewrapArgumentsOptions {
  /** The shell's arguments that run the command (`shellCommand(command, BUBBLEWRAP_COMMAND_FD)`). */
  shell: readonly string[];
  /** A descriptor the shell reads (the long command's text, `BUBBLEWRAP_COMMAND_FD`), left open. */
  keepFd?: number;
  policy: SandboxPolicy;
  hostFacts: HostFacts;
}

/**
 * The bubblewrap argv confining `command` to `policy`. Mount operations apply in order, so the
 * order below matters: the read-only host first, then the private trees, then the read view (what
 * is emptied, then what is shown again inside it), then the workspace's cache folder, then the
 * workspace, then the pins and the read-only binds over the protected paths that exist in it,
 * then the socket masks.
 */
export function bubblewrapArguments({
  shell,
  keepFd,
  policy,
  hostFacts,
}: BubblewrapArgumentsOptions): string[] {
  const args = bubblewrapSandboxArguments({ policy, hostFacts });
  const defaults = policyProxyEnvironment(policy.network);
  for (const [name, value] of Object.entries(requestedEnvironment(policy.env, defaults))) {
    args.push("--setenv", name, value);
  }
  // Through the domain proxy, the forwarder starts first and the command runs in place of its shell.
  const run = typeof policy.network === "object" ? forwardingShell(shell) : shell;
  args.push("--chdir", policy.cwd, "--", SHELL, ...closingShell(run, keepFd));
  return args;
}

/**
 * The arguments of a shell that closes every descriptor past stdio (but `keepFd`, a long
 * command's text) and then runs `/bin/bash` with `run` in its place. A descriptor pleach's own
 * process inherited without close-on-exec (left open by whatever started it) is inherited by
 * bubblewrap and would reach the command: a way out of the sandbox to whatever it names.
 */
export function closingShell(run: readonly string[], keepFd?: number): string[] {
  const kept = ["0", "1", "2", ...(keepFd === undefined ? [] : [String(keepFd)])].join("|");
  const script =
    `for f in /proc/self/fd/*; do f=\${f##*/}; case $f in ${kept}) ;; *) { exec {f}>&-; } 2>/dev/null ;; esac; done; ` +
    `exec ${SHELL} "$@"`;
  return ["-c", script, "pleach-close-fds", ...run];
}

/** The size of the sandbox's `/tmp` (memory-backed): builds and test runs write there. */
const TEMPORARY_BYTES = 1024 * 1024 * 1024;
/** The size of its `/dev/shm`, as Docker's default: POSIX shared memory and semaphores. */
const SHARED_MEMORY_BYTES = 64 * 1024 * 1024;
/** The size of its `/run` (and `/var/run`): sockets and pid files. */
const RUN_BYTES = 16 * 1024 * 1024;

/**
 * The part of {@link bubblewrapArguments} that builds the sandbox (namespaces and mounts), without
 * the command, its folder and its variables: what a warm sandbox is started from.
 */
export function bubblewrapSandboxArguments({
  policy,
  hostFacts,
}: Omit<BubblewrapArgumentsOptions, "shell" | "keepFd">): string[] {
  const { root } = hostFacts;
  if (root === "/") {
    throw new ToolError(
      "UNSUPPORTED",
      "the workspace root is /, which would make the whole host writable; choose a project folder",
    );
  }
  if (policy.network === true) {
    throw new ToolError(
      "NO_SANDBOX",
      "the whole network under bubblewrap goes through the domain proxy, allowing every name (see createCommandWrapper); this policy names no proxy",
    );
  }
  const writable = policy.mode === "workspace-write";
  const args = [
    "--new-session",
    "--die-with-parent",
    "--unshare-user",
    ...(hostFacts.bubblewrap?.disableUserNamespaces === false ? [] : ["--disable-userns"]),
    "--cap-drop",
    "ALL",
    // No setuid or setgid files (see seccomp.ts): for a root caller they would be the host's root's.
    "--seccomp",
    String(SECCOMP_FD),
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    // Never the host's network namespace, whose abstract sockets no mount hides: the whole network
    // and a domain policy alike go through the proxy, reached through a socket.
    "--unshare-net",
    "--ro-bind",
    "/",
    "/",
    // The memory file systems get sizes of their own (the kernel's default is half the memory
    // each): what a command, or a session across its commands, can hold there. /dev itself is
    // read-only, so nothing but its devices and /dev/shm takes bytes there.
    "--dev",
    "/dev",
    "--size",
    String(SHARED_MEMORY_BYTES),
    "--tmpfs",
    "/dev/shm",
    "--remount-ro",
    "/dev",
    "--proc",
    "/proc",
    // Inside the sandbox the caller's uid is kept; for a root caller that is the host's root, and
    // sysctls check the uid rather than capabilities (core_pattern would run code as host root).
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind-try",
    "/proc/sysrq-trigger",
    "/proc/sysrq-trigger",
    // The keyrings are not namespaced and seccomp refuses their calls (seccomp.ts); their table
    // would still show the names of the caller's keys.
    "--ro-bind-try",
    "/dev/null",
    "/proc/keys",
    "--ro-bind-try",
    "/dev/null",
    "/proc/key-users",
    "--size",
    String(TEMPORARY_BYTES),
    "--tmpfs",
    "/tmp",
    "--size",
    String(RUN_BYTES),
    "--tmpfs",
    "/run",
    ...(hostFacts.varRunIsDirectory ? ["--size", String(RUN_BYTES), "--tmpfs", "/var/run"] : []),
  ];
  for (const kept of hostFacts.runPathsToKeep) args.push("--ro-bind", kept, kept);
  if (typeof policy.network === "object") {
    const folder = policy.network.socketFolder;
    if (folder === undefined) {
      throw new ToolError(
        "NO_SANDBOX",
        "a domain policy under bubblewrap needs the proxy's socket folder",
      );
    }
    args.push("--ro-bind", folder, SANDBOX_PROXY_FOLDER);
  }
  const view: ReadView = hostFacts.readView ?? { emptied: [], shown: [] };
  // Mode 555 keeps commands from writing in an emptied folder (capabilities are dropped, so not
  // even root passes it) at the cost of one mount; without `--perms` it is remounted read-only.
  const emptiedByPerms = hostFacts.bubblewrap?.tmpfsPermissions !== false;
  args.push(...viewArguments(view, emptiedByPerms));
  // After the view, which empties the home the cache folder is in; before the hidden paths.
  if (policy.caches !== undefined) {
    args.push(...cacheMountArguments(policy.caches, view.emptied, emptiedByPerms));
  }
  // Hidden paths outside the workspace that the view shows (the system's secret files, a store in
  // a toolchain's folder): commands cannot create a missing one there (the host is read-only, and
  // the trees above are private), so it needs nothing, nor one the view empties anyway.
  const mounted = hostFacts.hiddenPaths.filter(
    ({ state, path: hidden }) =>
      (state === "folder" || state === "file") &&
      (isInside(root, hidden) ||
        (!HIDDEN_TREES.some((tree) => isInside(tree, hidden)) &&
          visibleInView(view, root, hidden))),
  );
  // The folders commands write: hidden paths inside them are mounted after their binds.
  const writableRoots = [root, ...(writable ? (hostFacts.writableFolders ?? []) : [])];
  const hiddenInside = mounted.filter(({ path: hidden }) =>
    writableRoots.some((top) => isInside(top, hidden)),
  );
  args.push(
    ...hideArguments(
      mounted.filter((each) => !hiddenInside.includes(each)),
      hostFacts,
    ),
  );
  args.push(writable ? "--bind" : "--ro-bind", root, root);
  // The folders besides the workspace that commands may write: shown read-only by the view, and
  // in workspace-write bound writable, their protected paths kept below like the workspace's.
  for (const folder of writableRoots.slice(1)) args.push("--bind", folder, folder);

  if (writable) {
    const symbolicLinks = hostFacts.protectedPaths.filter(({ state }) => state === "symbolic-link");
    if (symbolicLinks.length > 0) {
      const names = symbolicLinks.map(({ path: link }) => path.relative(root, link)).join(", ");
      throw new ToolError(
        "PROTECTED_PATH",
        `${names} in the workspace ${symbolicLinks.length === 1 ? "is a symbolic link" : "are symbolic links"}; ` +
          "a link at a protected path could be replaced by a command, so commands do not run in " +
          "workspace-write mode here. Replace the link with what it points to, or use read-only mode.",
        { details: { paths: symbolicLinks.map(({ path: link }) => link) } },
      );
    }
    // A mount point cannot be renamed or removed, so binding each folder between the root and a
    // protected path over itself stops `mv parent elsewhere && mkdir parent` from replacing it.
    // What a command makes at a missing protected path is moved aside when it ends
    // (`moveAsideAppeared`): nothing is mounted there, so the workspace looks as it is.
    const existing = hostFacts.protectedPaths.filter(({ state }) => state !== "missing");
    const pins = new Set<string>();
    // The folder a missing path would be made in is pinned too (with the folders above it), so
    // that it cannot be swapped meanwhile for one of the command's (`.git` itself, say).
    const within = hostFacts.protectedPaths.flatMap(({ within: folder }) =>
      folder === undefined ? [] : [path.join(folder, "-")],
    );
    const pinned = [...[...existing, ...hiddenInside].map(({ path: each }) => each), ...within];
    for (const protectedPath of pinned) {
      const top = writableRoots.find((each) => isInside(each, protectedPath)) ?? root;
      let parent = path.dirname(protectedPath);
      const chain: string[] = [];
      while (parent !== top && isInside(top, parent)) {
        chain.unshift(parent);
        parent = path.dirname(parent);
      }
      for (const folder of chain) pins.add(folder);
    }
    for (const folder of [...pins].sort(byDepth)) args.push("--bind", folder, folder);
    for (const { path: protectedPath } of existing) {
      args.push("--ro-bind", protectedPath, protectedPath);
    }
  }
  // Hidden paths inside the workspace (a home folder there) go over its binds; in workspace-write
  // the folders above them are pinned like those of protected paths, so a command cannot rename
  // one away from where the next command's policy looks.
  args.push(...hideArguments(hiddenInside, hostFacts));
  for (const socket of hostFacts.hostSockets) {
    if (visibleInView(view, root, socket)) args.push("--ro-bind", "/dev/null", socket);
  }
  // Last, once every mount point inside them is made: the emptied folders are read-only too.
  for (const { path: folder, state } of emptiedByPerms ? [] : view.emptied) {
    if (state === "folder") args.push("--remount-ro", folder);
  }
  return args;
}

/**
 * The read view's mounts: an empty tmpfs over each emptied folder (of mode 555 `byPerms`, else
 * remounted read-only at the end, see above), `/dev/null` over each emptied file, then a
 * read-only bind of each path shown again. Bubblewrap makes the mount points inside a tmpfs of
 * mode 555 with the capabilities it drops only afterwards. A
 * command that owns the tmpfs may chmod it and write there: in memory, gone with the sandbox.
 */
function viewArguments(view: ReadView, byPerms: boolean): string[] {
  const args: string[] = [];
  for (const { path: emptied, state } of view.emptied) {
    if (state === "folder") args.push(...(byPerms ? ["--perms", "0555"] : []), "--tmpfs", emptied);
    else args.push("--ro-bind", "/dev/null", emptied);
  }
  for (const { path: shown } of view.shown) args.push("--ro-bind", shown, shown);
  return args;
}

/**
 * Mounts that hide `hidden` from reads: an empty read-only folder that nobody may list (mode 000,
 * where bubblewrap sets a tmpfs's mode) over a folder, `/dev/null` over a file. Bubblewrap's binds
 * are `nodev`, so that device cannot be opened there, not even by root: reading the file fails with
 * "Permission denied" (EACCES), which a failure note ties to the rule, rather than reading empty.
 */
function hideArguments(hidden: readonly HiddenPath[], hostFacts: HostFacts): string[] {
  const args: string[] = [];
  for (const { path: target, state } of hidden) {
    if (state === "folder") {
      if (hostFacts.bubblewrap?.tmpfsPermissions !== false) args.push("--perms", "0000");
      args.push("--tmpfs", target, "--remount-ro", target);
    } else {
      args.push("--ro-bind", "/dev/null", target);
    }
  }
  return args;
}

function byDepth(left: string, right: string): number {
  return left.split(path.sep).length - right.split(path.sep).length || left.localeCompare(right);
}
