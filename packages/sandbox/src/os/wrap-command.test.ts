import { describe, expect, it } from "vitest";
import { nonInteractiveEnvironment } from "../policy/protected-entries.js";
import { closingShell } from "./bubblewrap.js";
import { shellCommand } from "./command-text.js";
import { createCommandWrapper } from "./create-command-wrapper.js";
import type { HostFacts } from "./host-facts.js";
import { seatbeltProfile } from "./seatbelt.js";
import { type SandboxPolicy, wrapCommand } from "./wrap-command.js";

const hostFacts: HostFacts = {
  root: "/home/ada/project",
  unreadableFolders: [],
  protectedPaths: [
    { path: "/home/ada/project/.envrc", state: "missing" },
    { path: "/home/ada/project/.git", state: "directory" },
    { path: "/home/ada/project/.vscode", state: "directory" },
    { path: "/home/ada/project/vendor/lib/.git", state: "directory" },
  ],
  hiddenPaths: [
    { path: "/etc/shadow", state: "file", rule: "it holds the system's password hashes" },
    { path: "/home/ada/.aws", state: "folder", rule: "it holds AWS access keys and SSO tokens" },
    { path: "/home/ada/.netrc", state: "missing", rule: "it holds passwords" },
  ],
  hostSockets: ["/home/ada/.ssh/agent.sock"],
  runPathsToKeep: ["/run/systemd/resolve/stub-resolv.conf"],
  varRunIsDirectory: false,
  inheritedEnvironment: {
    PATH: "/usr/bin:/bin",
    HOME: "/home/ada",
    LANG: "C.UTF-8",
    TMPDIR: "/tmp",
  },
  temporaryDirectory: "/tmp",
  walk: { directories: 12, truncated: false, listed: 1, tracking: "stamps" },
  gitEntries: [],
  bubblewrap: { path: "/usr/bin/bwrap", disableUserNamespaces: true },
};

const policy: SandboxPolicy = {
  backend: "bubblewrap",
  mode: "workspace-write",
  cwd: "/home/ada/project/src",
  network: false,
  env: { NODE_ENV: "test", GITHUB_TOKEN: "dropped" },
};

/** The argv as one line per option, which reads like the bwrap command it is. */
function lines(args: string[]): string {
  const out: string[] = [];
  for (const arg of args) {
    if (arg.startsWith("--") || out.length === 0) out.push(arg);
    else out[out.length - 1] += ` ${arg}`;
  }
  return out.join("\n");
}

describe("wrapCommand with bubblewrap", () => {
  it("confines workspace-write: read-only host, private trees, protected paths that exist pinned and bound read-only", () => {
    const { file, args, env, inputs } = wrapCommand({ command: "npm test", policy, hostFacts });
    expect(file).toBe("/usr/bin/bwrap");
    expect(env).toEqual(hostFacts.inheritedEnvironment);
    // `--seccomp 3` reads the filter the invocation itself carries.
    expect(inputs?.map((input) => input.byteLength % 8)).toEqual([0]);
    expect(inputs?.[0]?.byteLength).toBeGreaterThan(8 * 10);
    expect(lines(args)).toMatchInlineSnapshot(`
      "--new-session
      --die-with-parent
      --unshare-user
      --disable-userns
      --cap-drop ALL
      --seccomp 3
      --unshare-pid
      --unshare-ipc
      --unshare-uts
      --unshare-cgroup-try
      --unshare-net
      --ro-bind / /
      --dev /dev
      --size 67108864
      --tmpfs /dev/shm
      --remount-ro /dev
      --proc /proc
      --ro-bind /proc/sys /proc/sys
      --ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger
      --ro-bind-try /dev/null /proc/keys
      --ro-bind-try /dev/null /proc/key-users
      --size 1073741824
      --tmpfs /tmp
      --size 16777216
      --tmpfs /run
      --ro-bind /run/systemd/resolve/stub-resolv.conf /run/systemd/resolve/stub-resolv.conf
      --ro-bind /dev/null /etc/shadow
      --perms 0000
      --tmpfs /home/ada/.aws
      --remount-ro /home/ada/.aws
      --bind /home/ada/project /home/ada/project
      --bind /home/ada/project/vendor /home/ada/project/vendor
      --bind /home/ada/project/vendor/lib /home/ada/project/vendor/lib
      --ro-bind /home/ada/project/.git /home/ada/project/.git
      --ro-bind /home/ada/project/.vscode /home/ada/project/.vscode
      --ro-bind /home/ada/project/vendor/lib/.git /home/ada/project/vendor/lib/.git
      --ro-bind /dev/null /home/ada/.ssh/agent.sock
      --setenv GIT_TERMINAL_PROMPT 0
      --setenv GIT_EDITOR true
      --setenv EDITOR true
      --setenv VISUAL true
      --setenv PAGER cat
      --setenv GIT_PAGER cat
      --setenv npm_config_yes true
      --setenv DEBIAN_FRONTEND noninteractive
      --setenv PIP_NO_INPUT 1
      --setenv npm_config_cache /tmp/.npm
      --setenv NODE_ENV test
      --chdir /home/ada/project/src
      -- /bin/bash -c for f in /proc/self/fd/*; do f=\${f##*/}; case $f in 0|1|2) ;; *) { exec {f}>&-; } 2>/dev/null ;; esac; done; exec /bin/bash "$@" pleach-close-fds -c npm test"
    `);
  });

  it("refuses the whole network without the proxy: bubblewrap never shares the host's network namespace", () => {
    expect(() =>
      wrapCommand({ command: "true", policy: { ...policy, network: true }, hostFacts }),
    ).toThrow(expect.objectContaining({ code: "NO_SANDBOX" }));
  });

  it("confines read-only: the workspace bound read-only, no protections needed", () => {
    const { args } = wrapCommand({
      command: "curl -sI https://example.com",
      policy: { ...policy, mode: "read-only", network: false, env: {} },
      hostFacts: {
        ...hostFacts,
        varRunIsDirectory: true,
        bubblewrap: { path: "/usr/bin/bwrap", disableUserNamespaces: false },
      },
    });
    expect(lines(args)).toMatchInlineSnapshot(`
      "--new-session
      --die-with-parent
      --unshare-user
      --cap-drop ALL
      --seccomp 3
      --unshare-pid
      --unshare-ipc
      --unshare-uts
      --unshare-cgroup-try
      --unshare-net
      --ro-bind / /
      --dev /dev
      --size 67108864
      --tmpfs /dev/shm
      --remount-ro /dev
      --proc /proc
      --ro-bind /proc/sys /proc/sys
      --ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger
      --ro-bind-try /dev/null /proc/keys
      --ro-bind-try /dev/null /proc/key-users
      --size 1073741824
      --tmpfs /tmp
      --size 16777216
      --tmpfs /run
      --size 16777216
      --tmpfs /var/run
      --ro-bind /run/systemd/resolve/stub-resolv.conf /run/systemd/resolve/stub-resolv.conf
      --ro-bind /dev/null /etc/shadow
      --perms 0000
      --tmpfs /home/ada/.aws
      --remount-ro /home/ada/.aws
      --ro-bind /home/ada/project /home/ada/project
      --ro-bind /dev/null /home/ada/.ssh/agent.sock
      --setenv GIT_TERMINAL_PROMPT 0
      --setenv GIT_EDITOR true
      --setenv EDITOR true
      --setenv VISUAL true
      --setenv PAGER cat
      --setenv GIT_PAGER cat
      --setenv npm_config_yes true
      --setenv DEBIAN_FRONTEND noninteractive
      --setenv PIP_NO_INPUT 1
      --setenv npm_config_cache /tmp/.npm
      --chdir /home/ada/project/src
      -- /bin/bash -c for f in /proc/self/fd/*; do f=\${f##*/}; case $f in 0|1|2) ;; *) { exec {f}>&-; } 2>/dev/null ;; esac; done; exec /bin/bash "$@" pleach-close-fds -c curl -sI https://example.com"
    `);
  });

  it("mounts nothing at a missing protected path, and no --perms where it does not apply to --tmpfs (bubblewrap < 0.5)", () => {
    const { args } = wrapCommand({
      command: "true",
      policy,
      hostFacts: {
        ...hostFacts,
        bubblewrap: {
          path: "/usr/bin/bwrap",
          disableUserNamespaces: false,
          tmpfsPermissions: false,
        },
      },
    });
    expect(args.filter((arg) => arg.endsWith("/.envrc"))).toEqual([]);
    expect(args).not.toContain("--perms");
  });

  it("refuses workspace-write when a protected path is a symbolic link", () => {
    expect(() =>
      wrapCommand({
        command: "true",
        policy,
        hostFacts: {
          ...hostFacts,
          protectedPaths: [{ path: "/home/ada/project/.envrc", state: "symbolic-link" }],
        },
      }),
    ).toThrowErrorMatchingInlineSnapshot(
      `[ToolError: .envrc in the workspace is a symbolic link; a link at a protected path could be replaced by a command, so commands do not run in workspace-write mode here. Replace the link with what it points to, or use read-only mode.]`,
    );
  });

  it("refuses a workspace at /", () => {
    expect(() =>
      wrapCommand({ command: "true", policy, hostFacts: { ...hostFacts, root: "/" } }),
    ).toThrow(expect.objectContaining({ code: "UNSUPPORTED" }));
  });
});

describe("wrapCommand with a command too long for an argument", () => {
  const command = `: ${"x".repeat(100 * 1024)}; echo ok`;

  it("has bubblewrap's shell read it from fd 4, after the seccomp filter", () => {
    const { args, inputs } = wrapCommand({ command, policy, hostFacts });
    // The descriptors past stdio are closed first, but fd 4, which the shell then reads.
    expect(args.slice(args.indexOf("--") + 1)).toEqual([
      "/bin/bash",
      ...closingShell(shellCommand(command, 4).args, 4),
    ]);
    expect(closingShell([], 4)[1]).toContain("case $f in 0|1|2|4) ;;");
    expect(inputs).toHaveLength(2);
    expect(Buffer.from(inputs?.[1] ?? []).toString()).toBe(command);
  });

  it("has Seatbelt's shell read it from fd 3", () => {
    const { args, inputs } = wrapCommand({
      command,
      policy: { ...policy, backend: "seatbelt" },
      hostFacts,
    });
    expect(args.slice(2)).toEqual(["--", "/bin/bash", ...shellCommand(command, 3).args]);
    expect(inputs?.map((input) => Buffer.from(input).toString())).toEqual([command]);
  });
});

describe("wrapCommand with Seatbelt", () => {
  it("runs sandbox-exec with the profile and drops secret-looking and loader variables", () => {
    const { file, args, env } = wrapCommand({
      command: "make",
      policy: {
        ...policy,
        backend: "seatbelt",
        env: { DYLD_INSERT_LIBRARIES: "/x.dylib", CI: "1", NPM_TOKEN: "x" },
      },
      hostFacts: { ...hostFacts, temporaryDirectory: "/private/var/folders/xy/T" },
    });
    expect(file).toBe("/usr/bin/sandbox-exec");
    expect(args[0]).toBe("-p");
    expect(args.slice(2)).toEqual(["--", "/bin/bash", "-c", "make"]);
    expect(env).toEqual({
      ...hostFacts.inheritedEnvironment,
      ...nonInteractiveEnvironment(),
      npm_config_cache: "/tmp/.npm",
      CI: "1",
    });
  });

  it("writes a deny-by-default profile: writes only to the workspace and temp, never protected paths", () => {
    expect(
      seatbeltProfile({
        policy: { ...policy, backend: "seatbelt" },
        hostFacts: { ...hostFacts, temporaryDirectory: "/private/var/folders/xy/T" },
      }),
    ).toMatchInlineSnapshot(`
      "(version 1)
      (deny default)
      (allow process-exec)
      (allow process-fork)
      (allow signal (target same-sandbox))
      (allow process-info* (target same-sandbox))
      (allow file-read* (require-all
          (require-not (subpath "/etc/shadow"))
          (require-not (subpath "/home/ada/.aws"))
          (require-not (subpath "/home/ada/.netrc"))
        ))
      (allow sysctl-read)
      (allow pseudo-tty)
      (allow ipc-posix-sem)
      (allow ipc-posix-shm)
      (allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo") (global-name "com.apple.system.logger") (global-name "com.apple.system.notification_center") (global-name "com.apple.trustd.agent") (global-name "com.apple.SystemConfiguration.configd") (global-name "com.apple.dnssd.service"))
      (allow file-write-data file-ioctl (literal "/dev/null") (literal "/dev/zero") (regex #"^/dev/tty") (regex #"^/dev/fd/"))
      (allow file-write*
        (require-all (require-any (subpath "/private/tmp") (subpath "/private/var/folders/xy/T") (subpath "/home/ada/project"))
          (require-not (subpath "/home/ada/project/.envrc"))
          (require-not (subpath "/home/ada/project/.git"))
          (require-not (subpath "/home/ada/project/.vscode"))
          (require-not (subpath "/home/ada/project/vendor/lib/.git"))
          (require-not (regex #"^/home/ada/project/(.*/)?\\.git(/|$)"))
        ))
      "
    `);
  });

  it("allows IP networking and the DNS responder only when the policy allows the network", () => {
    const profile = seatbeltProfile({
      policy: { ...policy, backend: "seatbelt", mode: "read-only", network: true },
      hostFacts,
    });
    const profileLines = profile.split("\n");
    expect(profileLines.slice(profileLines.indexOf("(allow file-write*"))).toMatchInlineSnapshot(`
      [
        "(allow file-write*",
        "  (require-all (require-any (subpath "/private/tmp") (subpath "/tmp"))",
        "    (require-not (subpath "/home/ada/project/.envrc"))",
        "    (require-not (subpath "/home/ada/project/.git"))",
        "    (require-not (subpath "/home/ada/project/.vscode"))",
        "    (require-not (subpath "/home/ada/project/vendor/lib/.git"))",
        "    (require-not (regex #"^/home/ada/project/(.*/)?\\.git(/|$)"))",
        "  ))",
        "(allow network-outbound (remote ip))",
        "(allow network-inbound (local ip))",
        "(allow network-bind (local ip))",
        "(allow system-socket)",
        "(allow network-outbound (literal "/private/var/run/mDNSResponder"))",
        "",
      ]
    `);
  });
});

describe("a domain list's policy", () => {
  const proxied = { proxyPort: 3128, socketFolder: "/tmp/pleach-proxy-abc" };

  it("keeps bubblewrap's network namespace closed, binds the proxy's folder and starts the forwarder first", () => {
    const { args } = wrapCommand({
      command: "npm install",
      policy: {
        ...policy,
        mode: "read-only",
        network: proxied,
        env: { HTTPS_PROXY: "http://mine:1" },
      },
      hostFacts,
    });
    expect(args).toContain("--unshare-net");
    const bind = args.indexOf("/tmp/pleach-proxy-abc");
    expect(args.slice(bind - 1, bind + 2)).toEqual([
      "--ro-bind",
      "/tmp/pleach-proxy-abc",
      "/run/pleach-proxy",
    ]);
    expect(bind).toBeGreaterThan(args.lastIndexOf("/run"));
    const set = (name: string) => args[args.lastIndexOf(name) + 1];
    expect(set("HTTPS_PROXY")).toBe("http://mine:1");
    expect(set("https_proxy")).toBe("http://127.0.0.1:3128");
    expect(set("GIT_CONFIG_VALUE_0")).toBe("http://127.0.0.1:3128");
    // The descriptors past stdio are closed first, then the forwarder starts.
    const command = args.slice(args.indexOf("--") + 1);
    expect([command[0], command[1], command[3], command[4], command[6], command[7]]).toEqual([
      "/bin/bash",
      "-c",
      "pleach-close-fds",
      "-c",
      "pleach-proxy",
      "/usr/bin/perl",
    ]);
    expect(command.slice(-5)).toEqual([
      "3128",
      "/run/pleach-proxy/proxy.sock",
      "/bin/bash",
      "-c",
      "npm install",
    ]);
  });

  it("lets a Seatbelt command reach only the proxy's port of loopback", () => {
    const profile = seatbeltProfile({
      policy: { ...policy, backend: "seatbelt", mode: "read-only", network: { proxyPort: 50123 } },
      hostFacts,
    });
    const network = profile.split("\n").filter((line) => line.includes("network"));
    expect(network).toEqual(['(allow network-outbound (remote ip "localhost:50123"))']);
  });
});

describe("createCommandWrapper", () => {
  const request = {
    command: "echo hi",
    root: "/nonexistent",
    cwd: "/nonexistent",
    env: { EXTRA: "1" },
    network: false,
  };

  it("runs danger-full-access unconfined with the host environment", async () => {
    const wrapper = createCommandWrapper({
      backend: "none",
      hostEnvironment: { PATH: "/bin", SECRET_TOKEN: "kept" },
    });
    expect(await wrapper.invocation({ ...request, mode: "danger-full-access" })).toEqual({
      kind: "one-off",
      file: "/bin/bash",
      args: ["-c", "echo hi"],
      env: { PATH: "/bin", SECRET_TOKEN: "kept", ...nonInteractiveEnvironment(), EXTRA: "1" },
      release: expect.any(Function),
    });
  });

  it("gives danger-full-access the non-interactive variables over the host's, under the caller's", async () => {
    const wrapper = createCommandWrapper({
      backend: "none",
      hostEnvironment: { PATH: "/bin", EDITOR: "vim", PAGER: "less" },
    });
    const { env } = await wrapper.invocation({
      ...request,
      mode: "danger-full-access",
      env: { PAGER: "more" },
    });
    expect(env).toMatchObject({ EDITOR: "true", GIT_EDITOR: "true", PAGER: "more" });
  });

  it("feeds danger-full-access a long command on fd 3", async () => {
    const wrapper = createCommandWrapper({ backend: "none", hostEnvironment: { PATH: "/bin" } });
    const command = `: ${"x".repeat(100 * 1024)}`;
    const invocation = await wrapper.invocation({
      ...request,
      command,
      mode: "danger-full-access",
    });
    expect(invocation.args).toEqual(shellCommand(command, 3).args);
    expect(invocation.inputs?.map((input) => Buffer.from(input).toString())).toEqual([command]);
  });

  it("refuses confined modes without a backend, saying how to get one", async () => {
    const wrapper = createCommandWrapper({ backend: "none" });
    expect(wrapper.backend).toBe("none");
    await expect(wrapper.invocation({ ...request, mode: "workspace-write" })).rejects.toMatchObject(
      {
        code: "NO_SANDBOX",
        message: expect.stringContaining("danger-full-access"),
      },
    );
  });

  it("refuses confined modes when the chosen backend does not work on this host", async () => {
    const missing = process.platform === "darwin" ? "bubblewrap" : "seatbelt";
    const wrapper = createCommandWrapper({ backend: missing });
    await expect(wrapper.invocation({ ...request, mode: "read-only" })).rejects.toMatchObject({
      code: "NO_SANDBOX",
      message: expect.stringMatching(
        missing === "seatbelt" ? /sandbox-exec/ : /apt-get install bubblewrap/,
      ),
    });
  });

  it("picks the platform's backend by default", () => {
    const expected =
      { linux: "bubblewrap", darwin: "seatbelt" }[process.platform as string] ?? "none";
    expect(createCommandWrapper().backend).toBe(expected);
  });
});
