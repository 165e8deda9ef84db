// The Docker adapter on an image with no pleach in it (SWE-bench's evaluation images, say): the
// pleach sandbox image's files are mounted read-only (runtimeImage) and the sandbox works in a
// folder of the image (imageWorkspace), confined as on the host. The image is built here from the
// sandbox image with pleach, node and bubblewrap removed. Skips, saying why, where no engine answers.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { makeTempDir } from "@pleach/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDockerSandboxProvider } from "./docker-provider.js";
import { dockerSkipReason, ensureSandboxImage, IMAGE } from "./test-support/docker-engine.js";

const skipReason = dockerSkipReason();
const BARE_IMAGE = `pleach-test-bare:${process.pid}`;

describe.skipIf(skipReason !== undefined)(
  "Docker sandbox adapter on an image without pleach",
  () => {
    beforeAll(async () => {
      ensureSandboxImage();
      const context = await makeTempDir("pleach-bare-image-");
      try {
        await mkdir(path.join(context.dir, "testbed/.git"), { recursive: true });
        await writeFile(path.join(context.dir, "testbed/README"), "the image's own repository\n");
        await writeFile(
          path.join(context.dir, "Dockerfile"),
          `FROM ${IMAGE}\nRUN rm -rf /opt/pleach /usr/bin/bwrap /usr/bin/node\nCOPY testbed /testbed\nENTRYPOINT []\nCMD ["/bin/bash"]\n`,
        );
        execFileSync("docker", ["build", "--quiet", "--tag", BARE_IMAGE, context.dir], {
          stdio: ["ignore", "ignore", "inherit"],
        });
      } finally {
        await context.cleanup();
      }
    }, 300_000);

    afterAll(() => {
      if (skipReason === undefined) spawnSync("docker", ["rmi", "--force", BARE_IMAGE]);
    });

    it("runs the sandbox server from the mounted runtime, confined, in the image's /testbed", async () => {
      const provider = createDockerSandboxProvider({
        image: BARE_IMAGE,
        runtimeImage: IMAGE,
        imageWorkspace: "/testbed",
        memoryBytes: 256 * 1024 * 1024,
      });
      const session = await provider.acquire();
      try {
        expect(session.root).toBe("/testbed");
        expect((await session.client.readFile("README")).toString()).toBe(
          "the image's own repository\n",
        );
        // The image's programs, not the runtime's: it has no node of its own.
        const own = await session.client.exec("command -v node; echo status $?");
        expect(own.stdout).toBe("status 1\n");
        await session.client.writeFile("fix.txt", "written through the file route");
        const made = await session.client.exec("echo made > made.txt && cat fix.txt");
        expect(made.stdout).toBe("written through the file route");
        // Confined by bubblewrap as on the host: .git is protected, the network is gone, and the
        // runtime's files are read-only.
        const protectedWrite = await session.client.exec("touch .git/hooked");
        expect(protectedWrite.exitCode).not.toBe(0);
        await expect(session.client.writeFile(".git/hooked", "x")).rejects.toMatchObject({
          code: "PROTECTED_PATH",
        });
        expect((await session.client.exec("ls /sys/class/net")).stdout.trim()).toBe("lo");
        const runtime = await session.client.exec(
          "touch /opt/pleach-runtime/x; echo $?; head -c 2 /usr/bin/bwrap",
        );
        expect(runtime.stdout).toBe("1\n#!");
        const processes = await session.client.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '");
        expect(processes.stdout).not.toContain("sandbox-serve");
      } finally {
        await session.release();
      }
    }, 120_000);

    it("says how to build a runtime image that is missing", async () => {
      const provider = createDockerSandboxProvider({
        image: BARE_IMAGE,
        runtimeImage: "pleach-test-missing:none",
        imageWorkspace: "/testbed",
      });
      await expect(provider.acquire()).rejects.toThrow(
        "pleach-test-missing:none is not on this machine: build it with scripts/build-sandbox-image.sh",
      );
    });

    it("refuses a bound workspace beside the image's", async () => {
      const provider = createDockerSandboxProvider({
        image: BARE_IMAGE,
        runtimeImage: IMAGE,
        imageWorkspace: "/testbed",
      });
      await expect(provider.acquire({ workspace: "/var/tmp" })).rejects.toMatchObject({
        code: "INVALID_INPUT",
      });
    });
  },
);

if (skipReason !== undefined) {
  describe("Docker sandbox adapter on an image without pleach", () => {
    it.skip(`skipped: ${skipReason}`, () => {});
  });
}
