import { execFileSync } from "node:child_process";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import type { InvocationRequest } from "../os/command-wrapper.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";
import { runInvocation } from "../os/test-support/run-invocation.js";
import { attackSuiteSkipReason } from "../os/test-support/suite.js";
import { parseNetworkOption } from "./domain-rules.js";

const skipReason = await attackSuiteSkipReason();

/** The registry the user's npm is configured with, as the README tells users to read it. */
const registry = new URL(
  execFileSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).trim(),
);

/** Why the registry cannot be used from this host, or `undefined` when the host reaches it. */
async function registryUnreachable(): Promise<string | undefined> {
  try {
    const response = await fetch(new URL("is-number", registry), {
      signal: AbortSignal.timeout(15_000),
    });
    return response.ok ? undefined : `${registry.host} answered ${response.status}`;
  } catch (error) {
    return `${registry.host} is unreachable from the host: ${(error as Error).message}`;
  }
}
const offline = skipReason ?? (await registryUnreachable());

/** Run `command` through a fresh wrapper with `network`, and hand back its result and proxy log. */
async function runWith(
  command: string,
  network: unknown,
  root: string,
  env: Record<string, string> = {},
) {
  const wrapper = createCommandWrapper({ warmSandbox: false });
  const request: InvocationRequest = {
    command,
    root,
    cwd: root,
    mode: "workspace-write",
    env,
    network: parseNetworkOption(network),
  };
  const invocation = await wrapper.invocation(request);
  try {
    const result = await runInvocation(invocation, { timeoutMs: 120_000 });
    return { ...result, log: [...(invocation.confinement?.proxyLog ?? [])] };
  } finally {
    await invocation.release?.();
    await wrapper.close?.();
  }
}

describe.skipIf(offline !== undefined)(
  `network by domain through bubblewrap${offline === undefined ? "" : ` (skipped: ${offline})`}`,
  () => {
    it("installs a package from the user's registry with only that host allowed", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({
        root,
        network: { allowDomains: [registry.host] },
      });
      const result = await client.exec(
        "npm init -y >/dev/null && npm install --no-audit --no-fund is-number",
        {
          // ~/.npmrc is hidden: the user's registry is passed on. The cache needs nothing: it
          // goes to the sandbox's own /tmp by default (CONFINED_ENVIRONMENT).
          env: { npm_config_registry: registry.href },
          timeoutMs: 120_000,
        },
      );
      expect({ exitCode: result.exitCode, stderr: result.stderr }).toMatchObject({ exitCode: 0 });
      const installed = JSON.parse(
        await readFile(path.join(root, "node_modules/is-number/package.json"), "utf8"),
      );
      expect(installed.name).toBe("is-number");
    }, 180_000);

    it("reaches every name with the whole network (network: true), each request through the proxy", async () => {
      const root = await useTempDir();
      const { exitCode, stdout, stderr, log } = await runWith(
        [
          "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
          `curl -sS -o /dev/null -w '%{http_code}\\n' ${new URL("is-number", registry).href}`,
          "npm init -y >/dev/null && npm install --no-audit --no-fund is-number >/dev/null",
          "node -p 'require(\"is-number\")(5)'",
        ].join(" && "),
        true,
        root,
        { npm_config_registry: registry.href },
      );
      expect({ exitCode, stderr }).toMatchObject({ exitCode: 0 });
      expect(stdout).toBe("lo\n200\ntrue\n");
      expect(log.length).toBeGreaterThan(0);
      expect(log.every(({ host }) => host === registry.hostname)).toBe(true);
      expect(log.some(({ connected }) => connected)).toBe(true);
    }, 180_000);

    it("refuses https to another domain with a 403 naming the rule, opening no connection", async () => {
      const root = await useTempDir();
      const { exitCode, stderr, log } = await runWith(
        "curl -sS --max-time 20 https://example.com/",
        { allowDomains: [registry.host] },
        root,
      );
      expect(exitCode).not.toBe(0);
      expect(stderr).toContain("403");
      expect(log).toEqual([
        {
          method: "CONNECT",
          host: "example.com",
          port: 443,
          connected: false,
          refusal: `pleach's sandbox refused a connection to example.com:443: not in the allowed domains (${registry.host}). To allow it, start pleach with --allow-domain example.com (or allowDomains).`,
        },
      ]);
    }, 60_000);

    it("answers plain http to a denied domain with the body naming the deny pattern", async () => {
      const root = await useTempDir();
      const { stdout, log } = await runWith(
        "curl -sS --max-time 20 http://www.example.com/",
        { allowDomains: ["*.example.com"], denyDomains: ["www.example.com"] },
        root,
      );
      expect(stdout).toContain(
        "refused a connection to www.example.com:80: it matches the denied pattern www.example.com.",
      );
      expect(log.map(({ connected }) => connected)).toEqual([false]);
    }, 60_000);

    it("gives a failed command the refusal in sandboxNotes, and none to one that succeeds", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, network: { allowDomains: [] } });
      const failed = await client.exec("curl -sS --max-time 20 https://evil.example/");
      expect(failed.exitCode).not.toBe(0);
      expect(failed.sandboxNotes).toEqual([
        "pleach's sandbox refused a connection to evil.example:443: not in the allowed domains (none). To allow it, start pleach with --allow-domain evil.example (or allowDomains).",
      ]);
      const succeeded = await client.exec("curl -sS --max-time 20 https://evil.example/ || true");
      expect(succeeded.sandboxNotes).toBeUndefined();
    }, 60_000);

    it("keeps the caller's proxy variables over its own", async () => {
      const root = await useTempDir();
      const client = await createLocalSandbox({ root, network: { allowDomains: [] } });
      const { stdout } = await client.exec(
        'echo "$HTTPS_PROXY $https_proxy $npm_config_proxy $GIT_CONFIG_VALUE_0 $PIP_PROXY $NO_PROXY"',
        { env: { PIP_PROXY: "http://mine:1" } },
      );
      expect(stdout).toBe(
        "http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 http://mine:1 localhost,127.0.0.1,::1\n",
      );
    }, 60_000);

    it("holds the forwarder's port, so a command cannot listen there first", async () => {
      const root = await useTempDir();
      const { stdout } = await runWith(
        `node -e 'require("net").createServer().listen(3128, "127.0.0.1").on("error", (e) => console.log(e.code)).on("listening", () => { console.log("LISTENING"); process.exit(0); })'`,
        { allowDomains: [] },
        root,
      );
      expect(stdout.trim()).toBe("EADDRINUSE");
    }, 60_000);

    it("keeps the proxy's socket in a folder only its user may enter, and removes it after", async () => {
      const root = await useTempDir();
      const { stdout } = await runWith(
        "stat -c '%a %U' /run/pleach-proxy; ls /run/pleach-proxy",
        { allowDomains: [] },
        root,
      );
      const [mode, owner, name] = stdout.trim().split(/\s+/);
      expect(mode).toBe("700");
      expect(owner).toBe(execFileSync("id", ["-un"], { encoding: "utf8" }).trim());
      expect(name).toBe("proxy.sock");
      await expect(stat("/run/pleach-proxy")).rejects.toMatchObject({ code: "ENOENT" });
    }, 60_000);
  },
);
