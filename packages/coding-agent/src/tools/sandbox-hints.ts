/**
 * What to do when a command fails because of how the sandbox is set up rather than a mistake in
 * the command: the network that is off, the private `/tmp`. Shared by the tools that run commands,
 * so the model reads the same words whichever tool met the failure.
 */

/** What the resolver, git, curl, ssh and Node print when no name can be looked up or reached. */
const OFFLINE =
  /Could not resolve host|Temporary failure in name resolution|unable to look up \S+ \(port|Name or service not known|getaddrinfo (?:EAI_AGAIN|ENOTFOUND)|Network is unreachable/i;

/** Whether a command's output says it could not reach the network (a name lookup failed, say). */
export function looksOffline(output: string): boolean {
  return OFFLINE.test(output);
}

/** The way out of {@link looksOffline}: the switch that gives sandboxed commands the network. */
export const NETWORK_OFF_HINT =
  "This looks like no network: by default the sandbox runs commands without network access. It is turned on where pleach is started: `--network` on its command line (call, mcp, run, eval), or `network: true` in the options of `createLocalSandbox` / `createLocalSandboxProvider`. Ask the user to turn it on, or work from what is already on disk (a local repository clones from its path or file:// URL); if the network is on, check the host name.";

/** `/tmp` itself or a path under it: `/tmp`, `/tmp/x`. */
export function isUnderTmp(path: string): boolean {
  return path === "/tmp" || path.startsWith("/tmp/");
}

/** Why a path under `/tmp` that exists on the host is missing for a sandboxed command. */
export const PRIVATE_TMP_HINT =
  "Sandboxed commands see a private, empty /tmp of their own, not the host's, so a repository under the host's /tmp is not there for them. Put it inside the workspace or in another folder the sandbox can read (such as /var/tmp), then clone from there.";
