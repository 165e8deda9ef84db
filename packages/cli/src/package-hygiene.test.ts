// The packages as users get them: packed into tarballs, installed into a fresh folder, every
// subpath of every exports map imported and the bin run; publint over each package.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { makeTempDir } from "@pleach/core/testing";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, "../../..");
const packages = ["core", "coding-agent", "sandbox", "cli"];
/** The frameworks the adapters and the contract suite import, at the versions core is tested with. */
const peers = [
  "ai",
  "openai",
  "@anthropic-ai/sdk",
  "@anthropic-ai/claude-agent-sdk",
  "deepagents",
  "@mastra/core",
  "vitest",
];
/** The frameworks coding-agent's adapters import, at the versions it is tested with. */
const codingAgentPeers = ["@openai/agents"];

interface Manifest {
  name: string;
  exports: Record<string, unknown>;
  devDependencies?: Record<string, string>;
}

async function manifest(name: string): Promise<Manifest> {
  return JSON.parse(await readFile(path.join(repo, "packages", name, "package.json"), "utf8"));
}

describe("the packed packages", { timeout: 300_000 }, () => {
  let app: string;
  /** The files of each packed package, by package name. */
  const packedFiles = new Map<string, string[]>();
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    for (const name of packages) {
      if (!existsSync(path.join(repo, "packages", name, "dist"))) {
        throw new Error(
          `packages/${name} is not built: run \`npx tsc -b\` (npm test does it) first`,
        );
      }
    }
    const tarballs = await makeTempDir("pleach-pack-");
    const project = await makeTempDir("pleach-install-");
    cleanups.push(tarballs.cleanup, project.cleanup);
    app = project.dir;
    const { stdout } = await run(
      "npm",
      ["pack", "--workspaces", "--json", "--pack-destination", tarballs.dir],
      { cwd: repo },
    );
    const entries = JSON.parse(stdout) as Array<{
      name: string;
      filename: string;
      files: Array<{ path: string }>;
    }>;
    for (const entry of entries)
      packedFiles.set(
        entry.name,
        entry.files.map((file) => file.path),
      );
    const packed = entries.map((entry) => path.join(tarballs.dir, entry.filename));
    expect(packed).toHaveLength(packages.length);
    const core = await manifest("core");
    const codingAgent = await manifest("coding-agent");
    const peerSpecs = [
      ...peers.map((peer) => `${peer}@${core.devDependencies?.[peer]}`),
      ...codingAgentPeers.map((peer) => `${peer}@${codingAgent.devDependencies?.[peer]}`),
    ];
    await writeFile(
      path.join(app, "package.json"),
      JSON.stringify({ name: "pleach-install-check", private: true, type: "module" }),
    );
    await run(
      "npm",
      ["install", "--no-audit", "--no-fund", "--prefer-offline", ...packed, ...peerSpecs],
      { cwd: app, timeout: 240_000 },
    );
  }, 300_000);

  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it("imports every subpath of every exports map", async () => {
    const specifiers: string[] = [];
    for (const name of packages) {
      const { name: packageName, exports } = await manifest(name);
      for (const subpath of Object.keys(exports)) {
        specifiers.push(subpath === "." ? packageName : `${packageName}/${subpath.slice(2)}`);
      }
    }
    // A child process in the fresh folder, so resolution sees only what was installed.
    const script = `
      import { createRequire } from "node:module";
      const require = createRequire(import.meta.url);
      const results = {};
      for (const specifier of ${JSON.stringify(specifiers)}) {
        try {
          if (specifier.endsWith("/package.json")) results[specifier] = typeof require(specifier).name;
          else {
            await import(specifier);
            results[specifier] = "ok";
          }
        } catch (error) {
          results[specifier] = String(error.message);
        }
      }
      process.stdout.write(JSON.stringify(results));
    `;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: app,
    });
    const results = JSON.parse(stdout) as Record<string, string>;
    expect(results).toEqual(
      Object.fromEntries(
        specifiers.map((specifier) => [
          specifier,
          specifier.endsWith("/package.json") ? "string" : "ok",
        ]),
      ),
    );
    expect(specifiers).toEqual(
      expect.arrayContaining([
        "@pleach/core/ai-sdk",
        "@pleach/core/openai",
        "@pleach/core/anthropic",
        "@pleach/core/claude-agent-sdk",
        "@pleach/core/deepagents",
        "@pleach/core/mastra",
        "@pleach/core/sandbox",
        "@pleach/core/testing",
      ]),
    );
  });

  it("takes ai@7 beside @pleach/core with no peer conflict", async () => {
    const core = await manifest("core");
    const ai7 = core.devDependencies?.["ai-v7"]?.replace(/^npm:/, "");
    expect(ai7).toMatch(/^ai@7\./);
    // Strict peers: a conflict with @pleach/core's range would be an ERESOLVE failure here.
    const { stderr } = await run(
      "npm",
      [
        "install",
        "--dry-run",
        "--strict-peer-deps",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        `${ai7}`,
      ],
      { cwd: app, timeout: 120_000 },
    );
    expect(stderr).not.toMatch(/ERESOLVE|peer dep/i);
  });

  it("ships the sandbox's Perl programs, which its code reads from src/", () => {
    expect(packedFiles.get("@pleach/sandbox")).toEqual(
      expect.arrayContaining(["src/os/session-server.pl", "src/network/proxy-forwarder.pl"]),
    );
  });

  it("keeps the HTTP plumbing out of @pleach/sandbox's main entry, in its internal subpath", async () => {
    const plumbing = [
      "readRequestBody",
      "drainUnreadBody",
      "createConnectionLimits",
      "createRequestGuard",
      "createRequestOriginCheck",
      "HttpError",
    ];
    const script = `
      const main = await import("@pleach/sandbox");
      const internal = await import("@pleach/sandbox/internal/http");
      const names = ${JSON.stringify(plumbing)};
      process.stdout.write(JSON.stringify({
        main: names.filter((name) => name in main),
        internal: names.filter((name) => typeof internal[name] === "function"),
        pooled: typeof (await import("@pleach/core/sandbox")).createPooledSandboxProvider,
      }));
    `;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: app,
    });
    expect(JSON.parse(stdout)).toEqual({ main: [], internal: plumbing, pooled: "function" });
  });

  it("lets an outside vendor prove its client with the published contract suite", async () => {
    // What a vendor package writes: its client, the suite from @pleach/core/testing, vitest.
    await writeFile(
      path.join(app, "vendor.test.mjs"),
      `import { createLocalSandbox } from "@pleach/sandbox";
import { describeSandboxClientContract } from "@pleach/core/testing";
describeSandboxClientContract(
  "an installed client",
  async (root) => createLocalSandbox({ root, mode: "danger-full-access" }),
  { exec: true, sharedFileSystem: true },
);
`,
    );
    const { stdout } = await run(
      "npx",
      ["--no-install", "vitest", "run", "--reporter=json", "vendor.test.mjs"],
      { cwd: app, timeout: 120_000 },
    );
    const report = JSON.parse(stdout) as { numPassedTests: number; numFailedTests: number };
    expect(report.numFailedTests).toBe(0);
    expect(report.numPassedTests).toBeGreaterThan(10);
  });

  it("runs `npx pleach --help` from the installed bin", async () => {
    const { stdout } = await run("npx", ["--no-install", "pleach", "--help"], { cwd: app });
    expect(stdout).toContain("pleach mcp");
  });

  it("is publint clean", async () => {
    for (const name of packages) {
      const pkgDir = path.join(repo, "packages", name);
      const { messages } = await publint({ pkgDir, level: "suggestion", strict: true });
      const packageJson = JSON.parse(await readFile(path.join(pkgDir, "package.json"), "utf8"));
      expect({
        name,
        messages: messages.map((message) => formatMessage(message, packageJson)),
      }).toEqual({ name, messages: [] });
    }
  });
});
