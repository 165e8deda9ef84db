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
import {
  docker,
  dockerSkipReason,
  ensureSandboxImage,
  IMAGE,
} from "./test-support/docker-engine.js";

const skipReason = dockerSkipReason();
const BARE_IMAGE = `pleach-test-bare:${process.pid}`;
const TRAP_IMAGE = `pleach-test-trap:${process.pid}`;

/**
 * The bare image with its shells and env replaced by traps, a NODE_OPTIONS that would load a
 * script of its own into node, and an LD_PRELOAD and a name service of its own that would load a
 * library of its own into any program: each notes its run (uid, name, arguments) in /trap/ran,
 * which only a process outside the sandbox can write (the sandbox sees the image read-only), then
 * the real program runs. A launcher that runs any of them outside the sandbox leaves the note.
 */
const TRAP_DOCKERFILE = `FROM ${BARE_IMAGE}
RUN set -e; mkdir -m 1777 /trap; \\
  for name in sh bash dash env; do \\
    file="$(readlink -f "$(command -v "$name")" 2>/dev/null)" || continue; \\
    [ -f "$file" ] && [ ! -e "/usr/lib/trap-real-$name" ] || continue; \\
    cp "$file" "/usr/lib/trap-real-$name"; \\
  done; \\
  for real in /usr/lib/trap-real-*; do \\
    name="\${real#/usr/lib/trap-real-}"; file="$(readlink -f "$(command -v "$name")")"; \\
    printf '#!/usr/lib/trap-real-bash\\n{ echo "$(id -u) $0 $*" >>/trap/ran; } 2>/dev/null\\nexec -a "$0" %s "$@"\\n' "$real" >"$file.trap"; \\
    chmod 755 "$file.trap"; mv "$file.trap" "$file"; \\
  done; \\
  echo 'require("fs").appendFileSync("/trap/ran", "node " + process.getuid() + " ");' >/usr/lib/trap-hook.js; \\
  printf 'passwd: trap files\\ngroup: trap files\\nhosts: trap files\\n' >/etc/nsswitch.conf
COPY trap.so /usr/lib/trap.so
COPY trap.so /usr/lib/x86_64-linux-gnu/libnss_trap.so.2
ENV NODE_OPTIONS="--require /usr/lib/trap-hook.js" LD_PRELOAD=/usr/lib/trap.so
`;

/** The trap image's library: its LD_PRELOAD, and its name service (nsswitch.conf). */
const TRAP_LIBRARY = `#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void noted(void) {
  FILE *note = fopen("/trap/ran", "a");
  if (note != NULL) {
    fprintf(note, "library %d ", (int)getuid());
    fclose(note);
  }
}
`;

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
      if (skipReason === undefined) spawnSync("docker", ["rmi", "--force", TRAP_IMAGE, BARE_IMAGE]);
    });

    it("runs nothing of the image outside the sandbox, nor as root: its shells are traps", async () => {
      const context = await makeTempDir("pleach-trap-image-");
      try {
        await writeFile(path.join(context.dir, "Dockerfile"), TRAP_DOCKERFILE);
        await writeFile(path.join(context.dir, "trap.c"), TRAP_LIBRARY);
        execFileSync("gcc", ["-shared", "-fPIC", "-o", "trap.so", "trap.c"], { cwd: context.dir });
        execFileSync("docker", ["build", "--quiet", "--tag", TRAP_IMAGE, context.dir], {
          stdio: ["ignore", "ignore", "inherit"],
        });
      } finally {
        await context.cleanup();
      }
      const provider = createDockerSandboxProvider({
        image: TRAP_IMAGE,
        runtimeImage: IMAGE,
        imageWorkspace: "/testbed",
        memoryBytes: 256 * 1024 * 1024,
      });
      const session = await provider.acquire();
      try {
        // The server's start, a command's launch (and a shell of the image inside the sandbox),
        // a write through the file route.
        const ran = await session.client.exec(
          "sh -c 'echo inside' && test -w /proc/sys/kernel/core_pattern && echo writable; id -u",
        );
        await session.client.writeFile("fix.txt", "x");
        // Nothing of the image ran outside the sandbox: no note in the container's files.
        expect(docker("diff", session.id)).not.toContain("/trap/ran");
        // Commands run as that user too, and cannot write the kernel's settings.
        expect(ran.stdout).toMatch(/^inside\n[1-9]\d*\n$/);
        // Every process runs as a user that is not root, but the engine's own init (docker-init,
        // not the image's), which started the runtime's launcher as root for it to give the
        // workspace away.
        const processes = docker("top", session.id, "-eo", "pid,uid,args")
          .split("\n")
          .slice(1)
          .map((line) => line.trim().split(/\s+/))
          .filter((fields) => fields[2] !== "/sbin/docker-init");
        const server = processes.filter((fields) => fields.join(" ").includes("sandbox-serve"));
        expect(server).toHaveLength(1);
        const uid = server[0]?.[1] as string;
        expect(processes.map((fields) => fields[1])).toEqual(processes.map(() => uid));
        expect(uid).not.toBe("0");
        const settings = docker(
          "exec",
          "--user",
          `${uid}:${uid}`,
          session.id,
          "/usr/lib/trap-real-bash",
          "-c",
          "test -w /proc/sys/kernel/core_pattern && echo writable || echo refused",
        );
        expect(settings).toBe("refused");
      } finally {
        await session.release();
      }
    }, 300_000);

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
          "touch /opt/pleach-runtime/x; echo $?; head -c 4 /usr/bin/bwrap",
        );
        expect(runtime.stdout).toBe("1\n\u007fELF");
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

    it("refuses to run a container of the image as root", async () => {
      const provider = createDockerSandboxProvider({
        image: BARE_IMAGE,
        runtimeImage: IMAGE,
        imageWorkspace: "/testbed",
        user: "0:0",
      });
      await expect(provider.acquire()).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining("never run as root"),
      });
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
