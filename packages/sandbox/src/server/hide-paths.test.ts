import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { sandboxJobsOf } from "@pleach/core/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createHttpStreamSandboxProvider,
  type HttpStreamSandboxProvider,
} from "../http-provider.js";
import { createLocalSandbox } from "../local-sandbox.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";
import { attackSuiteSkipReason, runningAs } from "../os/test-support/suite.js";
import { hidePaths } from "./hide-paths.js";
import { createSandboxServer, type SandboxServer } from "./sandbox-server.js";

// Each command of a sandbox server sees no other sandbox's workspace and not the token file, also
// when commands come back to back (when a wrapper would run them in a warm sandbox), nor does a
// background job (the session sandbox is built from arguments of its own).

const skipReason = await attackSuiteSkipReason();
const TOKEN = "h".repeat(32);

describe.skipIf(skipReason !== undefined)(
  `a sandbox server's hidden paths ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    let folder: string;
    let server: SandboxServer;
    let provider: HttpStreamSandboxProvider;
    let tokenFile: string;

    beforeAll(async () => {
      folder = await realpath(await mkdtemp(path.join("/var/tmp", "pleach-hide-")));
      tokenFile = path.join(folder, "token");
      await writeFile(tokenFile, TOKEN, { mode: 0o600 });
      server = await createSandboxServer({
        root: path.join(folder, "root"),
        token: TOKEN,
        hiddenFiles: [tokenFile],
        // A wrapper that would run back-to-back commands in a warm sandbox.
        commandWrapper: createCommandWrapper({ warmSandbox: true, warmIdleMs: 5_000 }),
      });
      provider = createHttpStreamSandboxProvider({
        baseURL: server.url,
        auth: () => ({ headers: { Authorization: `Bearer ${TOKEN}` } }),
      });
    });

    afterAll(async () => {
      provider.close();
      await server.close();
      await rm(folder, { recursive: true, force: true });
    });

    it("hides the other sandboxes and the token from every command, back to back too", async () => {
      const secretHolder = await provider.acquire();
      await secretHolder.client.writeFile("secret.txt", "sibling-secret\n");
      const where = (await secretHolder.client.exec("pwd -P")).stdout.trim();
      const attacker = await provider.acquire();
      const own = path.basename((await attacker.client.exec("pwd -P")).stdout.trim());
      const seen: string[] = [];
      for (let round = 0; round < 6; round += 1) {
        const result = await attacker.client.exec(
          `cat ${where}/secret.txt ${tokenFile} 2>/dev/null; ls ${path.dirname(where)}`,
        );
        seen.push(result.stdout);
      }
      // Of the folder of all workspaces, a command sees its own only.
      expect(seen).toEqual(Array(6).fill(`${own}\n`));
      // So does a background job, in the sandbox's session.
      const jobs = sandboxJobsOf(attacker.client);
      const job = await jobs?.start(
        `cat ${where}/secret.txt ${tokenFile} 2>/dev/null; ls ${path.dirname(where)}`,
      );
      const read = await jobs?.output(job?.jobId ?? "", { waitMs: 10_000, until: "\n" });
      expect(read?.output).toBe(`${own}\n`);
      await attacker.release();
      await secretHolder.release();
    });

    it("hides them in a session sandbox too, one started before the sibling existed included", async () => {
      const all = path.join(folder, "all");
      const own = path.join(all, "own");
      const sibling = path.join(all, "sibling");
      await mkdir(own, { recursive: true });
      const wrapper = hidePaths({
        wrapper: createCommandWrapper(),
        folders: [all],
        files: [tokenFile],
      });
      const client = await createLocalSandbox({
        root: own,
        session: true,
        commandWrapper: wrapper,
      });
      try {
        const job = await client.jobs?.start(
          `while sleep 0.05; do cat ${sibling}/secret.txt ${tokenFile} 2>/dev/null; done`,
        );
        expect((await client.exec("ls ..")).stdout).toBe("own\n");
        await mkdir(sibling);
        await writeFile(path.join(sibling, "secret.txt"), "sibling-secret\n");
        const after = await client.exec(`cat ${sibling}/secret.txt ${tokenFile}; ls ..`);
        expect(after.stdout).toBe("own\n");
        const read = await client.jobs?.output(job?.jobId ?? "", { waitMs: 500 });
        expect(read?.output).toBe("");
      } finally {
        await client.close();
      }
    });
  },
);

describe("hidePaths", () => {
  it("keeps every method of the wrapper it masks for (the looks at what jobs made among them)", () => {
    const wrapper = createCommandWrapper({ warmSandbox: false });
    const masked = hidePaths({ wrapper, folders: ["/srv/sandboxes"], files: [] });
    expect(Object.keys(masked).sort()).toEqual(Object.keys(wrapper).sort());
  });
});
