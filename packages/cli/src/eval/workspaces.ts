import path from "node:path";
import { createGitCloneTool, shellQuote } from "@pleach/coding-agent/tools";
import type { SandboxMode } from "@pleach/core";
import type { SandboxClient, SandboxProvider } from "@pleach/core/sandbox";
import { SANDBOX_SPECIFICATION_VERSION } from "@pleach/core/sandbox";
import {
  createDockerSandboxProvider,
  createLocalSandbox,
  createLocalSandboxProvider,
  type NetworkOption,
} from "@pleach/sandbox";
import type { ReadFlags } from "../read-flags.js";
import { git } from "./git.js";
import type { EvalInstance } from "./instances.js";
import { repositorySource } from "./repository-source.js";

/** Where an instance is worked on: the agent's sandboxes, and the harness's own client there. */
export interface InstanceWorkspace {
  /**
   * What the agent runs in, at the repository's root: sessions of their own, none of the
   * harness's, so that ending them ends all the agent started.
   */
  agentProvider: SandboxProvider;
  /**
   * The harness's client at the repository's root (workspace-write): test patch and tests, in a
   * sandbox none of the agent's commands ran in.
   */
  client: SandboxClient;
  /** What the test command is run after, in the same shell (the image's environment). */
  testPrelude: string;
  release(): Promise<void>;
}

/** How instances get their workspace: a local clone, or a Docker image per instance. */
export interface WorkspaceOptions {
  /** The agent's sandbox mode. */
  mode: SandboxMode;
  /**
   * Which network sandboxed commands may reach (remote repositories): `--network` or domains
   * (all or nothing with `image`).
   */
  network: NetworkOption;
  /** Paths hidden from sandboxed commands besides the defaults, and those given back. */
  reads: ReadFlags;
  /** `--image`: the image template; each instance then runs in its image, at `/testbed`. */
  image?: { template: string; runtimeImage: string };
  /** The folder a relative `repo` path is resolved from. @default process.cwd() */
  cwd?: string;
}

/**
 * SWE-bench's images install the repository's requirements in conda's `testbed` environment, which
 * their harness activates before the tests (its `eval.sh`); an image without conda is left as is.
 */
const IMAGE_TEST_PRELUDE =
  "if [ -f /opt/miniconda3/bin/activate ]; then source /opt/miniconda3/bin/activate && conda activate testbed; fi\n";

/** The folder of SWE-bench's evaluation images that holds the repository at `base_commit`. */
const IMAGE_WORKSPACE = "/testbed";

/** The placeholders an `--image` template may hold, and what each becomes. */
const IMAGE_PLACEHOLDERS: Record<string, (instanceId: string) => string> = {
  // Docker image names are lower case; SWE-bench lowers its ids for its own image names.
  instance_id: (id) => id.toLowerCase(),
  // Docker Hub's swebench/ images spell the `__` of an id (its owner/name slash) as `_1776_`.
  hub_id: (id) => id.toLowerCase().replaceAll("__", "_1776_"),
};

/** The placeholders of `template` that are not known, for the usage check. */
export function unknownImagePlaceholders(template: string): string[] {
  return [...template.matchAll(/\{([^}]*)\}/g)]
    .map((match) => match[1] as string)
    .filter((name) => !(name in IMAGE_PLACEHOLDERS));
}

/** The image of `instance` named by `template` (`{instance_id}`, `{hub_id}`). */
export function imageFor(template: string, instance: EvalInstance): string {
  return template.replace(/\{([^}]*)\}/g, (whole, name: string) => {
    const value = IMAGE_PLACEHOLDERS[name];
    return value === undefined ? whole : value(instance.instance_id);
  });
}

/**
 * The workspace of `instance`: with `image`, a container of the instance's image whose `/testbed`
 * must already be at `base_commit` (checked); otherwise a fresh local sandbox into which the
 * repository is cloned and `base_commit` checked out.
 */
export async function instanceWorkspace(
  instance: EvalInstance,
  { mode, network, reads, image, cwd = process.cwd() }: WorkspaceOptions,
  abortSignal: AbortSignal,
): Promise<InstanceWorkspace> {
  if (image !== undefined) {
    if (typeof network !== "boolean") {
      throw new Error(
        "a domain list does not reach into --image containers: network is all or nothing there",
      );
    }
    return imageWorkspace(instance, { mode, network, image }, abortSignal);
  }
  const provider = createLocalSandboxProvider({ mode: "workspace-write", network, ...reads });
  const session = await provider.acquire({ abortSignal });
  try {
    await createGitCloneTool(session.client).execute(
      { url: await repositorySource(instance.repo, cwd), dest: "repo" },
      { abortSignal },
    );
    const repoRoot = path.join(session.client.root, "repo");
    // The harness checks out as itself: the sandbox never lets a command write a .git folder.
    await git(["checkout", "--quiet", "--detach", instance.base_commit], { cwd: repoRoot });
    const client = await createLocalSandbox({
      root: repoRoot,
      mode: "workspace-write",
      network,
      ...reads,
    });
    return {
      agentProvider: createLocalSandboxProvider({ root: repoRoot, mode, network, ...reads }),
      client,
      testPrelude: "",
      // The harness's client first: its commands and jobs end before the session's release
      // removes the folder.
      release: async () => {
        await client.close();
        await session.release();
      },
    };
  } catch (error) {
    await session.release();
    throw error;
  }
}

async function imageWorkspace(
  instance: EvalInstance,
  {
    mode,
    network,
    image,
  }: Pick<WorkspaceOptions, "mode"> & { network: boolean } & Required<
      Pick<WorkspaceOptions, "image">
    >,
  abortSignal: AbortSignal,
): Promise<InstanceWorkspace> {
  const name = imageFor(image.template, instance);
  const provider = createDockerSandboxProvider({
    image: name,
    runtimeImage: image.runtimeImage,
    imageWorkspace: IMAGE_WORKSPACE,
    mode,
    network,
  });
  const session = await provider.acquire({ abortSignal });
  try {
    const head = await session.client.exec("git rev-parse HEAD", { abortSignal });
    if (head.stdout.trim() !== instance.base_commit) {
      throw new Error(
        `${name}: ${IMAGE_WORKSPACE} is at ${head.stdout.trim() || `no commit (${head.stderr.trim()})`}, not base_commit ${instance.base_commit}; use the image built for this instance`,
      );
    }
    // One container, two sandboxes over /testbed: the agent's, whose release ends every process
    // it started, and the harness's (this one), which applies the test patch and runs the tests.
    return {
      agentProvider: {
        specificationVersion: SANDBOX_SPECIFICATION_VERSION,
        acquire: (options) => session.acquireSibling(options),
      },
      client: session.client,
      testPrelude: IMAGE_TEST_PRELUDE,
      release: () => session.release(),
    };
  } catch (error) {
    await session.release();
    throw error;
  }
}

/**
 * The files the agent changed, added or removed in the repository (tracked or not, ignored files
 * aside): SWE-bench's "patch exists" when there is one.
 */
export async function changedFiles(
  client: SandboxClient,
  abortSignal: AbortSignal,
): Promise<string[]> {
  const status = await client.exec(
    `git status --porcelain --untracked-files=all -z -- ${shellQuote(".")}`,
    { abortSignal, env: { GIT_OPTIONAL_LOCKS: "0" } },
  );
  if (status.exitCode !== 0) {
    throw new Error(`git status failed (exit code ${status.exitCode}): ${status.stderr.trim()}`);
  }
  return status.stdout
    .split("\0")
    .filter((entry) => entry !== "")
    .map((entry) => entry.slice(3));
}
