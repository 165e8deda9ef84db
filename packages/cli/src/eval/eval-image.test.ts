// `pleach eval --image` over the mini dataset, each instance in an image of SWE-bench's layout
// built here (no registry is reachable): the repository at base_commit in /testbed, node to run its
// tests in a conda-like `testbed` environment, and no pleach (the pleach sandbox image is mounted
// in by --sandbox-image). It must resolve
// what the local run resolves. Needs a running Docker engine (bash scripts/start-dockerd.sh) and
// the built packages (npx tsc -b); skips, saying why, without an engine.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../test-support/run-cli.js";
import { expectRewritingJobUnresolved } from "../test-support/test-rewriting-model.js";
import { git } from "./git.js";
import { readInstances } from "./instances.js";
import { buildMiniDataset, sandboxVisibleTempParent } from "./mini-dataset.js";
import type { SwebenchRunReport } from "./swebench-report.js";
import { imageFor } from "./workspaces.js";

const repo = path.resolve(import.meta.dirname, "../../../..");
/** The image the Docker suites of packages/sandbox build, shared with them. */
const SANDBOX_IMAGE = "pleach-sandbox:test";
const TEMPLATE = `pleach-test-eval-${process.pid}/sweb.eval.x86_64.{hub_id}`;

function skipReason(): string | undefined {
  const info = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], {
    encoding: "utf8",
  });
  if (info.error !== undefined || info.status !== 0) {
    return "no Docker engine answers; start one (bash scripts/start-dockerd.sh)";
  }
  if (!existsSync("/usr/bin/bwrap")) return "bubblewrap is not installed (the image copies it)";
  if (spawnSync("gcc", ["--version"]).status !== 0) {
    return "gcc is not installed (the image builds its static launchers: apt-get install gcc libc6-dev)";
  }
  return undefined;
}
const skip = skipReason();

function dockerBuild(tag: string, context: string): void {
  execFileSync("docker", ["build", "--quiet", "--tag", tag, context], {
    stdio: ["ignore", "ignore", "inherit"],
  });
}

describe.skipIf(skip !== undefined)("pleach eval --image", () => {
  const images: string[] = [];
  let instancesFile = "";
  let directory = "";

  beforeAll(async () => {
    // The sandbox image, from the built packages, unless it already holds exactly that build.
    execFileSync(
      "bash",
      [path.join(repo, "scripts/build-sandbox-image.sh"), "--if-changed", SANDBOX_IMAGE],
      {
        cwd: repo,
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    directory = await realpath(
      await mkdtemp(path.join(await sandboxVisibleTempParent(), "pleach-eval-image-")),
    );
    instancesFile = await buildMiniDataset({ directory: path.join(directory, "dataset") });
    // A base without pleach: the sandbox image's programs (git, bash) less pleach and bubblewrap,
    // and node, the tests' runtime, only in the `testbed` environment of a stand-in for conda, as
    // SWE-bench's images keep the repository's requirements (activated before the tests).
    const base = path.join(directory, "base");
    await mkdir(base);
    await writeFile(
      path.join(base, "activate"),
      'conda() { [ "$1" = activate ] && PATH="/opt/miniconda3/envs/$2/bin:$PATH" && export PATH; }\n',
    );
    await writeFile(
      path.join(base, "Dockerfile"),
      [
        `FROM ${SANDBOX_IMAGE}`,
        "RUN rm -rf /opt/pleach /usr/bin/bwrap && mkdir -p /opt/miniconda3/envs/testbed/bin && mv /usr/bin/node /opt/miniconda3/envs/testbed/bin/",
        "COPY activate /opt/miniconda3/bin/activate",
        "ENTRYPOINT []",
        'CMD ["/bin/bash"]',
        "",
      ].join("\n"),
    );
    const baseTag = `pleach-test-eval-${process.pid}/base`;
    dockerBuild(baseTag, base);
    images.push(baseTag);
    // One image per instance, as SWE-bench's: the repository checked out at base_commit in /testbed.
    for (const instance of await readInstances(instancesFile)) {
      const context = path.join(directory, "images", instance.instance_id);
      await mkdir(context, { recursive: true });
      await git(["clone", "--quiet", instance.repo, path.join(context, "testbed")], {
        cwd: context,
      });
      await git(["checkout", "--quiet", "--detach", instance.base_commit], {
        cwd: path.join(context, "testbed"),
      });
      await writeFile(
        path.join(context, "Dockerfile"),
        `FROM ${baseTag}\nCOPY testbed /testbed\nWORKDIR /testbed\n`,
      );
      const tag = imageFor(TEMPLATE, instance);
      dockerBuild(tag, context);
      images.unshift(tag);
    }
  }, 600_000);

  afterAll(async () => {
    for (const image of images) spawnSync("docker", ["rmi", "--force", image]);
    if (directory !== "") await rm(directory, { recursive: true, force: true });
  });

  /**
   * `pleach eval` with `model` over the dataset, locally or (`extra`) in the images; SWE-bench's
   * report. In the images nothing is cloned: their `repo` is made a GitHub name, unreachable here.
   */
  async function evaluate(model: string, extra: string[]): Promise<SwebenchRunReport> {
    let file = instancesFile;
    if (extra.length > 0) {
      file = path.join(directory, "in-images.jsonl");
      const lines = (await readFile(instancesFile, "utf8")).trim().split("\n");
      const unreachable = lines.map((line) =>
        JSON.stringify({ ...JSON.parse(line), repo: "pleach-test/not-cloned" }),
      );
      await writeFile(file, `${unreachable.join("\n")}\n`);
    }
    const output = path.join(directory, `${model}-${extra.length}.json`);
    const { code, stderr } = await runCli([
      "eval",
      file,
      "--model",
      model,
      "--concurrency",
      "2",
      "--output",
      output,
      ...extra,
    ]);
    expect(code, stderr).toBe(0);
    return JSON.parse(await readFile(output, "utf8")) as SwebenchRunReport;
  }

  const inImages = ["--image", TEMPLATE, "--sandbox-image", SANDBOX_IMAGE];

  it("resolves with the gold patches in the images what it resolves locally: 5 of 5", async () => {
    const local = await evaluate("gold", []);
    const imaged = await evaluate("gold", inImages);
    expect(imaged.resolved_ids).toHaveLength(5);
    expect(imaged.resolved_ids).toEqual(local.resolved_ids);
    expect(imaged.instances).toEqual(local.instances);
  }, 600_000);

  it("resolves none with no change, as locally", async () => {
    const local = await evaluate("empty", []);
    const imaged = await evaluate("empty", inImages);
    expect(imaged).toMatchObject({ resolved_instances: 0, empty_patch_instances: 5 });
    expect(imaged.instances).toEqual(local.instances);
  }, 600_000);

  it("ends the agent's background jobs before grading: a job rewriting the tests resolves nothing", async () => {
    await expectRewritingJobUnresolved(await readInstances(instancesFile), {
      image: { template: TEMPLATE, runtimeImage: SANDBOX_IMAGE },
    });
  }, 300_000);

  it("refuses an image whose /testbed is not at base_commit", async () => {
    const lines = (await readFile(instancesFile, "utf8")).trim().split("\n");
    const moved = { ...JSON.parse(lines[0] as string), base_commit: "0".repeat(40) };
    const file = path.join(directory, "moved.jsonl");
    await writeFile(file, `${JSON.stringify(moved)}\n`);
    const { code, stdout } = await runCli(["eval", file, "--model", "gold", ...inImages]);
    expect(code).toBe(1);
    expect(stdout).toContain(`not base_commit ${"0".repeat(40)}`);
  }, 120_000);
});

describe("pleach eval --image, its command line", () => {
  it("says what is wrong: an unknown placeholder, read-only, read flags, domains, a lone --sandbox-image", async () => {
    const refused = async (...args: string[]) => {
      const { code, stderr } = await runCli([
        "eval",
        "--dataset",
        "mini",
        "--model",
        "gold",
        ...args,
      ]);
      expect(code).toBe(2);
      return stderr;
    };
    expect(await refused("--image", "x/{id}")).toContain(
      "unknown placeholder {id}; use {instance_id} or {hub_id}",
    );
    expect(await refused("--image", "x/{hub_id}", "--mode", "read-only")).toContain(
      "--mode read-only would keep the test patch out",
    );
    expect(await refused("--image", "x/{hub_id}", "--hide-read", "/srv")).toContain(
      "--image containers hold only the image's",
    );
    expect(await refused("--image", "x/{hub_id}", "--allow-domain", "pypi.org")).toContain(
      "do not reach into --image containers",
    );
    expect(await refused("--sandbox-image", "pleach-sandbox:dev")).toContain(
      "--sandbox-image goes with --image",
    );
  });

  it("names SWE-bench's images from the instance", () => {
    const instance = { instance_id: "Django__django-11099" } as Parameters<typeof imageFor>[1];
    expect(imageFor("swebench/sweb.eval.x86_64.{hub_id}:latest", instance)).toBe(
      "swebench/sweb.eval.x86_64.django_1776_django-11099:latest",
    );
    expect(imageFor("sweb.eval.x86_64.{instance_id}:latest", instance)).toBe(
      "sweb.eval.x86_64.django__django-11099:latest",
    );
  });
});

if (skip !== undefined) {
  describe("pleach eval --image", () => {
    it.skip(`skipped: ${skip}`, () => {});
  });
}
