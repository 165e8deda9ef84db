// What the Docker tests share: whether an engine answers, and the sandbox image built once from
// the code under test (scripts/build-sandbox-image.sh --if-changed, serialised between files).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export const repo = path.resolve(import.meta.dirname, "../../../../..");
export const IMAGE = "pleach-sandbox:test";

/** Why the Docker tests cannot run here, or `undefined` when an engine answers. */
export function dockerSkipReason(): string | undefined {
  const info = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], {
    encoding: "utf8",
    timeout: 15_000,
  });
  if (info.error !== undefined)
    return `the docker command is not installed (${info.error.message})`;
  if (info.status !== 0) {
    return `no Docker engine answers (${info.stderr.trim().split("\n").at(-1)}); start one (bash scripts/start-dockerd.sh)`;
  }
  if (!existsSync("/usr/bin/bwrap")) return "bubblewrap is not installed (the image copies it)";
  if (spawnSync("gcc", ["--version"]).status !== 0) {
    return "gcc is not installed (the image builds its static launchers: apt-get install gcc libc6-dev)";
  }
  return undefined;
}

/**
 * Build the packages (when that fails, as it may while files are being edited, the last build is
 * used) and the image from them, unless the image already holds exactly that build.
 */
export function ensureSandboxImage(): void {
  // One build at a time: test files run in parallel.
  const built = spawnSync(
    "bash",
    [
      "-c",
      `exec 9>"${path.join(os.tmpdir(), `pleach-tsc-${process.getuid?.() ?? 0}.lock`)}"; flock 9; exec npx tsc -b`,
    ],
    { cwd: repo, encoding: "utf8" },
  );
  if (built.status !== 0 && !existsSync(path.join(repo, "packages/sandbox/dist/index.js"))) {
    throw new Error(`npx tsc -b failed: ${built.stdout}${built.stderr}`);
  }
  execFileSync("bash", [path.join(repo, "scripts/build-sandbox-image.sh"), "--if-changed", IMAGE], {
    cwd: repo,
    stdio: ["ignore", "ignore", "inherit"],
  });
}

/** `docker` with these arguments; its trimmed stdout. */
export function docker(...args: string[]): string {
  return execFileSync("docker", args, { encoding: "utf8" }).trim();
}

/** The names of the containers, running or not, that carry this label (`key=value`). */
export function containersLabelled(label: string): string[] {
  return docker("ps", "--all", "--filter", `label=${label}`, "--format", "{{.Names}}")
    .split("\n")
    .filter((name) => name !== "");
}
