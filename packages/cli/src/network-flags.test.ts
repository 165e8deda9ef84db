import { useTempDir } from "@pleach/core/testing";
import { probeSandboxBackend } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { parseNetworkFlags } from "./cli-support.js";
import { runCli } from "./test-support/run-cli.js";

const probe = await probeSandboxBackend({ backend: "bubblewrap" });

describe("--network, --allow-domain and --deny-domain", () => {
  it("give the sandbox's network option", () => {
    expect(parseNetworkFlags({}, "call")).toBe(false);
    expect(parseNetworkFlags({ network: true }, "call")).toBe(true);
    expect(
      parseNetworkFlags(
        {
          "allow-domain": ["registry.npmjs.org", "*.github.com"],
          "deny-domain": ["gist.github.com"],
        },
        "call",
      ),
    ).toEqual({
      allowDomains: ["registry.npmjs.org", "*.github.com"],
      denyDomains: ["gist.github.com"],
    });
  });

  it("refuse --network with a domain list, a deny list alone and a wrong pattern", () => {
    expect(() =>
      parseNetworkFlags({ network: true, "allow-domain": ["example.com"] }, "call"),
    ).toThrow(/--network lets commands reach every host and --allow-domain only some/);
    expect(() => parseNetworkFlags({ "deny-domain": ["example.com"] }, "call")).toThrow(
      /--deny-domain narrows an --allow-domain list/,
    );
    expect(() => parseNetworkFlags({ "allow-domain": ["https://example.com"] }, "call")).toThrow(
      /--allow-domain\/--deny-domain: "https:\/\/example.com" is not a domain pattern; use a host name/,
    );
  });

  it("exit 2 on a wrong pattern, naming it", async () => {
    const root = await useTempDir();
    const result = await runCli([
      "call",
      "bash",
      '{"command": "true"}',
      "--workspace",
      root,
      "--allow-domain",
      "example.com/path",
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"example.com/path" is not a domain pattern');
  });

  it.skipIf(!probe.available)(
    "refuse from `pleach call bash` a host the list leaves out, with the 403's line",
    async () => {
      const root = await useTempDir();
      const result = await runCli([
        "call",
        "bash",
        JSON.stringify({ command: "curl -sS http://evil.example/" }),
        "--workspace",
        root,
        "--allow-domain",
        "registry.npmjs.org",
      ]);
      expect(JSON.parse(result.stdout).output).toContain(
        "pleach's sandbox refused a connection to evil.example:80: not in the allowed domains (registry.npmjs.org). To allow it, start pleach with --allow-domain evil.example (or allowDomains).",
      );
    },
  );
});
