import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it, vi } from "vitest";
import { runProcess } from "../run-process.js";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { probeSandboxBackend } from "./probe.js";

describe.skipIf(process.platform !== "linux")("probeSandboxBackend on Linux", () => {
  it("finds bubblewrap working exactly when confined commands run", async () => {
    const probe = await probeSandboxBackend({ backend: "bubblewrap" });
    const root = await useTempDir({ prefix: "pleach-probe-test-" });
    const wrapper = createCommandWrapper({ backend: "bubblewrap", warmIdleMs: 0 });
    try {
      for (const mode of ["read-only", "workspace-write"] as const) {
        const request = { command: "echo ran", root, cwd: root, env: {}, network: false, mode };
        if (!probe.available) {
          await expect(wrapper.invocation(request)).rejects.toMatchObject({
            code: "NO_SANDBOX",
            message: expect.stringContaining(probe.reason),
          });
          continue;
        }
        const invocation = await wrapper.invocation(request);
        try {
          const result = await runProcess(invocation, {
            cwd: root,
            timeoutMs: 20_000,
            maxOutputBytes: 10_000,
          });
          expect({ mode, ...result }).toMatchObject({ mode, exitCode: 0, stdout: "ran\n" });
        } finally {
          await invocation.release?.();
        }
      }
    } finally {
      await wrapper.close?.();
    }
  });

  it("builds its sandbox with wrapCommand: no seccomp filter for the architecture, no sandbox", async ({
    skip,
  }) => {
    const real = await probeSandboxBackend({ backend: "bubblewrap" });
    if (!real.available) skip(`needs a working bubblewrap: ${real.reason}`);
    const arch = Object.getOwnPropertyDescriptor(process, "arch");
    Object.defineProperty(process, "arch", { ...arch, value: "riscv64" });
    try {
      // A fresh module: the answer is cached for the life of the process.
      vi.resetModules();
      const fresh = await import("./probe.js");
      const probe = await fresh.probeSandboxBackend({ backend: "bubblewrap" });
      expect(probe).toMatchObject({
        backend: "bubblewrap",
        available: false,
        reason: expect.stringContaining("no seccomp filter for riscv64"),
      });
    } finally {
      if (arch !== undefined) Object.defineProperty(process, "arch", arch);
    }
  });
});
