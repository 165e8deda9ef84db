import { SHELL } from "../os/command-text.js";
import type { SandboxPolicy } from "../os/sandbox-policy.js";
import { PERL_PATH } from "../os/session-server.js";
import { perlProgram } from "../perl-program.js";

/**
 * How a command under bubblewrap reaches the host's domain proxy: its network namespace has only
 * loopback, so a small forwarder started before the command (Perl, `/usr/bin/perl`, root-owned,
 * as the warm sandbox's server; it starts in a fifth of Node's time) listens on
 * 127.0.0.1:{@link SANDBOX_PROXY_PORT} there and relays each connection to the proxy's Unix socket,
 * bound read-only at {@link SANDBOX_PROXY_FOLDER}. The forwarder ends with the sandbox.
 */

/** The port the forwarder listens on inside the sandbox's own network namespace. */
export const SANDBOX_PROXY_PORT = 3128;
/** Where the host folder holding the proxy's socket is bound inside the sandbox. */
export const SANDBOX_PROXY_FOLDER = "/run/pleach-proxy";
/** The proxy's socket, in its folder. */
export const PROXY_SOCKET_NAME = "proxy.sock";

/**
 * The forwarder (`proxy-forwarder.pl`), run by `perl -e` with the port and the socket path as
 * arguments: it prints `ready` once it listens (or why it cannot), then relays each connection in
 * a process of its own, one per direction, passing on each end's shutdown.
 */
const FORWARDER = perlProgram("network/relay-pump.pl", "network/proxy-forwarder.pl");

/**
 * The shell's arguments that start the forwarder, wait until it listens, then run the command
 * (`SHELL` and `shell` after it) in place of that shell. The forwarder gets no stdin, none of the
 * launcher's inputs and no stderr, so it holds none of the command's streams open.
 */
export function forwardingShell(shell: readonly string[], perlPath = PERL_PATH): string[] {
  const script =
    'IFS= read -r PLEACH_FORWARDER < <(exec "$1" -e "$2" "$3" "$4" </dev/null 2>/dev/null 3<&- 4<&-); ' +
    '[ -n "$PLEACH_FORWARDER" ] || PLEACH_FORWARDER="$1 exited"; ' +
    '[ "$PLEACH_FORWARDER" = ready ] || { echo "pleach: the network proxy forwarder did not start in the sandbox ($PLEACH_FORWARDER); it needs $1" >&2; exit 126; }; ' +
    'unset PLEACH_FORWARDER; shift 4; exec "$@"';
  return [
    "-c",
    script,
    "pleach-proxy",
    perlPath,
    FORWARDER(),
    String(SANDBOX_PROXY_PORT),
    `${SANDBOX_PROXY_FOLDER}/${PROXY_SOCKET_NAME}`,
    SHELL,
    ...shell,
  ];
}

/**
 * The forwarder as a session sandbox's server runs it, beside the session's commands for as long
 * as the sandbox lives (see `SessionSandbox`): a command for `/bin/bash -c` and its whole
 * environment, which carries the program so that no quoting is needed. It prints `ready` once it
 * listens, as in {@link forwardingShell}.
 */
export function sessionForwarder(perlPath = PERL_PATH): {
  command: string;
  env: Record<string, string>;
} {
  return {
    command: `exec "$PLEACH_PERL" -e "$PLEACH_FORWARDER" ${SANDBOX_PROXY_PORT} ${SANDBOX_PROXY_FOLDER}/${PROXY_SOCKET_NAME}`,
    env: { PATH: "/usr/bin:/bin", PLEACH_PERL: perlPath, PLEACH_FORWARDER: FORWARDER() },
  };
}

/** The variables that name the proxy: curl, pip, Python, Go and Ruby read the first ones, npm its own. */
const PROXY_VARIABLES = [
  "HTTP_PROXY",
  "http_proxy",
  "HTTPS_PROXY",
  "https_proxy",
  "ALL_PROXY",
  "all_proxy",
  "npm_config_proxy",
  "npm_config_https_proxy",
  "PIP_PROXY",
];

/**
 * The variables that point a command's tools at the domain proxy on `127.0.0.1:port`, set inside
 * the sandbox under the caller's own (which win). `NO_PROXY` keeps loopback direct; git reads its
 * `http.proxy` from `GIT_CONFIG_*`; Node's `fetch` follows the others with `NODE_USE_ENV_PROXY`
 * (Node 24 and later).
 */
function proxyEnvironment(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  const environment: Record<string, string> = {};
  for (const name of PROXY_VARIABLES) environment[name] = url;
  environment.NO_PROXY = "localhost,127.0.0.1,::1";
  environment.no_proxy = environment.NO_PROXY;
  environment.GIT_CONFIG_COUNT = "1";
  environment.GIT_CONFIG_KEY_0 = "http.proxy";
  environment.GIT_CONFIG_VALUE_0 = url;
  environment.NODE_USE_ENV_PROXY = "1";
  return environment;
}

/** {@link proxyEnvironment} for a policy's network: none unless it goes through the proxy. */
export function policyProxyEnvironment(network: SandboxPolicy["network"]): Record<string, string> {
  return typeof network === "object" ? proxyEnvironment(network.proxyPort) : {};
}
