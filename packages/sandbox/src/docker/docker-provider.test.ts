// The Docker adapter against the contract suite and its own promises (no network, limits set,
// removed on release). Needs a running Docker engine; builds the image from local files when it
// is missing (scripts/build-sandbox-image.sh). Skips, saying why, where no engine answers.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeSandboxClientContract } from "../../../coding-agent/src/test-support/sandbox-contract.js";
import type { HttpSandboxSession } from "../http-provider.js";
import { createDockerSandboxProvider } from "./docker-provider.js";

const repo = path.resolve(import.meta.dirname, "../../../..");
const IMAGE = "pleach-sandbox:test";

function whySkip(): string | undefined {
  const info = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], {
    encoding: "utf8",
    timeout: 15_000,
  });
  if (info.error !== undefined)
    return `the docker command is not installed (${info.error.message})`;
  if (info.status !== 0) {
    return `no Docker engine answers (${info.stderr.trim().split("\n").at(-1)}); start dockerd (apt-get install docker.io, then dockerd &)`;
  }
  return undefined;
}

const skipReason = whySkip();

describe.skipIf(skipReason !== undefined)("Docker sandbox adapter", () => {
  const provider = createDockerSandboxProvider({
    image: IMAGE,
    cpus: 1,
    memoryBytes: 256 * 1024 * 1024,
    pids: 128,
  });
  const sessions: HttpSandboxSession[] = [];

  beforeAll(() => {
    if (!existsSync(path.join(repo, "packages/sandbox/dist/index.js"))) {
      execFileSync("npx", ["tsc", "-b"], { cwd: repo, stdio: "inherit" });
    }
    // Always rebuilt: the image must hold the code under test.
    execFileSync("bash", [path.join(repo, "scripts/build-sandbox-image.sh"), IMAGE], {
      cwd: repo,
      stdio: ["ignore", "ignore", "inherit"],
    });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(sessions.map((session) => session.release()));
  });

  describeSandboxClientContract(
    "Docker (one container per sandbox, workspace bound from the host)",
    async (root) => {
      const session = await provider.acquire({ workspace: root });
      sessions.push(session);
      return session.client;
    },
    { exec: true, sharedFileSystem: true },
  );

  it("runs with no network, no capabilities, limits set, and is removed on release", async () => {
    const session = await provider.acquire();
    const inspect = (format: string) =>
      spawnSync("docker", ["inspect", "--format", format, session.id], { encoding: "utf8" });
    const limits = inspect(
      "{{.HostConfig.NetworkMode}} {{.HostConfig.NanoCpus}} {{.HostConfig.Memory}} {{.HostConfig.PidsLimit}} {{.HostConfig.CapDrop}} {{.HostConfig.SecurityOpt}}",
    );
    expect(limits.stdout.trim()).toBe(
      `none 1000000000 ${256 * 1024 * 1024} 128 [ALL] [no-new-privileges]`,
    );
    const interfaces = await session.client.exec("ls /sys/class/net");
    expect(interfaces.stdout.trim()).toBe("lo");
    const who = await session.client.exec('id -u; printf %s "$PLEACH_SANDBOX_TOKEN"');
    expect(who.stdout).toBe("1000\n");
    await session.client.writeFile("inside.txt", "only in the container");
    expect((await session.client.exec("cat inside.txt")).stdout).toBe("only in the container");
    await session.release();
    expect(inspect("{{.Name}}").status).not.toBe(0);
  }, 60_000);

  it("stops a fork bomb at the pids limit", async () => {
    const session = await provider.acquire();
    try {
      const result = await session.client.exec(
        "for i in $(seq 1 400); do sleep 5 & done 2>/dev/null; echo started $(jobs -p | wc -l)",
        { timeoutMs: 20_000 },
      );
      expect(Number(result.stdout.replace(/\D+/g, ""))).toBeLessThan(128);
    } finally {
      await session.release();
    }
  }, 60_000);
});

if (skipReason !== undefined) {
  describe("Docker sandbox adapter", () => {
    it.skip(`skipped: ${skipReason}`, () => {});
  });
}
