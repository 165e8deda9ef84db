import { spawnSync } from "node:child_process";
import { copyFile, lstat, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { ExecResult } from "@pleach/core/sandbox";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox, type LocalSandbox } from "../local-sandbox.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";
import { attackSuiteSkipReason, runningAs } from "../os/test-support/suite.js";
import { workspaceCacheFolder } from "./caches.js";
import {
  writeNpmTarball,
  writePythonSourceArchive,
  writeVendoredGoModule,
} from "./test-support/cache-projects.js";

/** Whether `name` runs from the host's `PATH`. */
function onPath(name: string): boolean {
  return spawnSync("/bin/sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0;
}

const bubblewrapSkip = await attackSuiteSkipReason();
const goSkip = bubblewrapSkip ?? (onPath("go") ? undefined : "no go on PATH");
const pythonSkip = bubblewrapSkip ?? (onPath("python3") ? undefined : "no python3 on PATH");
const npmSkip = bubblewrapSkip ?? (onPath("npm") ? undefined : "no npm on PATH");

/** A sandbox over a fresh workspace whose caches live under a fresh user cache folder. */
async function cachedSandbox({
  mode = "workspace-write",
  caches,
}: {
  mode?: "read-only" | "workspace-write" | "danger-full-access";
  caches?: boolean | { maxBytes?: number };
} = {}): Promise<{ sandbox: LocalSandbox; root: string; userCache: string }> {
  const root = await useTempDir("pleach-caches-root-");
  const userCache = await useTempDir("pleach-caches-user-");
  const commandWrapper = createCommandWrapper({
    hostEnvironment: { ...process.env, XDG_CACHE_HOME: userCache },
    ...(caches === undefined ? {} : { caches }),
  });
  const sandbox = await createLocalSandbox({ root, mode, commandWrapper });
  return { sandbox, root, userCache };
}

/** `result`, failing with its output when the command did not succeed. */
function succeeded(result: ExecResult): ExecResult {
  if (result.exitCode !== 0) {
    throw new Error(`exit ${result.exitCode}\n${result.stdout}\n${result.stderr}`);
  }
  return result;
}

/** The cache folder of the only workspace under `userCache`. */
async function cacheFolderOf(userCache: string): Promise<string> {
  const caches = path.join(userCache, "pleach", "caches");
  // Beside it, the `.root` file that names its workspace.
  const names = (await readdir(caches)).filter((name) => /^[0-9a-f]{16}$/.test(name));
  expect(names).toHaveLength(1);
  return path.join(caches, names[0] as string);
}

async function entriesBelow(folder: string): Promise<number> {
  return (await readdir(folder, { recursive: true })).length;
}

describe.skipIf(bubblewrapSkip !== undefined)(
  `kept caches ${runningAs()}${bubblewrapSkip ? ` (skipped: ${bubblewrapSkip})` : ""}`,
  () => {
    it("point every tool's cache into the workspace's folder, under the caller's env", async () => {
      const { sandbox, userCache } = await cachedSandbox();
      const printed = succeeded(
        await sandbox.exec(
          // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's expansion, not a template.
          'for v in GOCACHE GOMODCACHE CARGO_HOME PIP_CACHE_DIR UV_CACHE_DIR npm_config_cache XDG_CACHE_HOME GOFLAGS; do echo "$v=${!v-unset}"; done',
          { env: { UV_CACHE_DIR: "/tmp/uv", GOFLAGS: "-mod=vendor" } },
        ),
      );
      const folder = await cacheFolderOf(userCache);
      expect(printed.stdout.replaceAll(folder, "<cache>")).toBe(
        [
          "GOCACHE=<cache>/go-build",
          "GOMODCACHE=<cache>/go-mod",
          "CARGO_HOME=<cache>/cargo",
          "PIP_CACHE_DIR=<cache>/pip",
          "UV_CACHE_DIR=/tmp/uv",
          "npm_config_cache=<cache>/npm",
          "XDG_CACHE_HOME=<cache>/xdg",
          "GOFLAGS=-mod=vendor",
          "",
        ].join("\n"),
      );
      expect(printed.sandboxNotes).toBeUndefined();
    });

    it("are off with caches: false: npm's goes to the private /tmp as before", async () => {
      const { sandbox, userCache } = await cachedSandbox({ caches: false });
      const printed = succeeded(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's expansion, not a template.
        await sandbox.exec('echo "${GOCACHE-unset} $npm_config_cache ${XDG_CACHE_HOME-unset}"'),
      );
      expect(printed.stdout).toBe("unset /tmp/.npm unset\n");
      expect(await readdir(userCache)).toEqual([]);
    });

    it("leave danger-full-access as it was: the host's own caches", async () => {
      const { sandbox, userCache } = await cachedSandbox({ mode: "danger-full-access" });
      const printed = succeeded(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's expansion, not a template.
        await sandbox.exec('echo "${GOCACHE-unset} ${npm_config_cache-unset}"', {
          env: {},
        }),
      );
      expect(printed.stdout).toBe(
        `${process.env.GOCACHE ?? "unset"} ${process.env.npm_config_cache ?? "unset"}\n`,
      );
      expect(await readdir(userCache)).toEqual([]);
    });

    it("keep the host's own caches and other workspaces' out of reach", async () => {
      const { sandbox, userCache } = await cachedSandbox();
      succeeded(await sandbox.exec("true"));
      const folder = await cacheFolderOf(userCache);
      const other = path.join(path.dirname(folder), "0123456789abcdef");
      await mkdir(path.join(other, "go-build"), { recursive: true, mode: 0o700 });
      await writeFile(path.join(other, "go-build", "entry"), "another workspace's");
      const hostCache = path.join(os.homedir(), ".cache");
      const probe = `pleach-caches-probe-${process.pid}`;
      const attempts = await sandbox.exec(
        [
          `touch ${hostCache}/${probe} 2>/dev/null && echo wrote-host-cache`,
          `mkdir -p ${hostCache}/go-build 2>/dev/null && touch ${hostCache}/go-build/${probe} 2>/dev/null && echo wrote-host-go-build`,
          `echo poison > ${other}/go-build/entry 2>/dev/null && echo wrote-other`,
          `ls ${path.dirname(folder)}`,
          "echo done",
        ].join("; "),
      );
      expect(attempts.stdout).toBe(`${path.basename(folder)}\ndone\n`);
      await expect(lstat(path.join(hostCache, probe))).rejects.toThrow(/ENOENT/);
      expect(await readFile(path.join(other, "go-build", "entry"), "utf8")).toBe(
        "another workspace's",
      );
    });

    it("are emptied past their bound, not following a link a command planted to a host file", async () => {
      const { sandbox, root, userCache } = await cachedSandbox({
        caches: { maxBytes: 256 * 1024 },
      });
      const victims = await useTempDir("pleach-caches-victim-");
      const victim = path.join(victims, "precious");
      await writeFile(victim, "the user's");
      // Over the bound before the first command, measured as it starts, emptied once it ended.
      const made = workspaceCacheFolder({ root, hostEnvironment: { XDG_CACHE_HOME: userCache } });
      if (!("folder" in made)) throw new Error(made.problem);
      await writeFile(path.join(made.folder, "go-build", "big"), Buffer.alloc(1024 * 1024, 1));
      succeeded(
        await sandbox.exec(
          `ln -s ${victim} "$GOCACHE/link" && ln -s ${victims} "$XDG_CACHE_HOME/folder" && sleep 0.5`,
        ),
      );
      const folder = await cacheFolderOf(userCache);
      // Measured at the first command and after a later one ends: the note comes a result later.
      let noted: string[] | undefined;
      for (let attempt = 0; attempt < 50 && noted === undefined; attempt += 1) {
        const result = succeeded(await sandbox.exec("true"));
        noted = result.sandboxNotes;
        if (noted === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(noted).toEqual([expect.stringMatching(/over their bound of .*, and were emptied/)]);
      expect(await readdir(path.join(folder, "go-build"))).toEqual([]);
      expect(await readFile(victim, "utf8")).toBe("the user's");
      expect(await readdir(victims)).toEqual(["precious"]);
    });

    it.skipIf(goSkip !== undefined)(
      `build a Go module with a vendored dependency twice, the second from the cache${goSkip ? ` (skipped: ${goSkip})` : ""}`,
      async () => {
        const { sandbox, root, userCache } = await cachedSandbox();
        await writeVendoredGoModule(root);
        const first = succeeded(
          await sandbox.exec("go build -o app . && ./app", { timeoutMs: 120_000 }),
        );
        expect(first.stdout).toBe("HI! 200\n");
        const folder = await cacheFolderOf(userCache);
        expect(await entriesBelow(path.join(folder, "go-build"))).toBeGreaterThan(10);
        // `-x` prints a compile step for each package built: none once all come from the cache.
        const second = succeeded(
          await sandbox.exec("go build -x -o app .", { timeoutMs: 120_000 }),
        );
        expect(second.stderr).not.toMatch(/\/compile /);
        const readOnly = await cachedSandbox({ mode: "read-only" });
        await writeVendoredGoModule(readOnly.root);
        expect(
          succeeded(await readOnly.sandbox.exec("go vet . && go build -o /tmp/app . && /tmp/app"))
            .stdout,
        ).toBe("HI! 200\n");
      },
    );

    it.skipIf(pythonSkip !== undefined)(
      `pip install into a virtual environment through the kept wheel cache${pythonSkip ? ` (skipped: ${pythonSkip})` : ""}`,
      async () => {
        const { sandbox, root, userCache } = await cachedSandbox();
        const archive = await writePythonSourceArchive(await useTempDir("pleach-caches-sdist-"));
        await copyFile(archive, path.join(root, path.basename(archive)));
        const install = (venv: string) =>
          sandbox.exec(
            `python3 -m venv ${venv} && ${venv}/bin/pip install --no-index --find-links . tinypkg && ${venv}/bin/python -c 'import tinypkg; print(tinypkg.X)'`,
            { timeoutMs: 120_000 },
          );
        const first = succeeded(await install("one"));
        expect(first.stdout).toMatch(/^1$/m);
        const folder = await cacheFolderOf(userCache);
        const wheels = (await readdir(path.join(folder, "pip"), { recursive: true })).filter(
          (name) => name.endsWith(".whl"),
        );
        expect(wheels).toHaveLength(1);
        // pip keeps the wheel it built; its next command sees it in the cache, as do the host's.
        const listed = succeeded(await sandbox.exec("one/bin/pip cache list"));
        expect(listed.stdout).toMatch(/tinypkg-0\.1-py3-none-any\.whl/);
        // A second environment installs the kept wheel: nothing is built again.
        const second = succeeded(await install("two"));
        expect(second.stdout).toMatch(/^1$/m);
        expect(second.stdout).not.toMatch(/Building wheel/);
        expect(first.stdout).toMatch(/Building wheel/);
      },
    );

    it.skipIf(npmSkip !== undefined)(
      `npm install of a local tarball through the kept npm cache${npmSkip ? ` (skipped: ${npmSkip})` : ""}`,
      async () => {
        const { sandbox, root, userCache } = await cachedSandbox();
        const tarball = await writeNpmTarball(await useTempDir("pleach-caches-npm-"));
        await copyFile(tarball, path.join(root, path.basename(tarball)));
        await writeFile(
          path.join(root, "package.json"),
          JSON.stringify({ name: "app", private: true }),
        );
        succeeded(
          await sandbox.exec(`npm install --no-audit --no-fund ./${path.basename(tarball)}`, {
            timeoutMs: 120_000,
          }),
        );
        expect(succeeded(await sandbox.exec("node -p \"require('tiny')\"")).stdout).toBe("42\n");
        const folder = await cacheFolderOf(userCache);
        expect(await entriesBelow(path.join(folder, "npm", "_cacache"))).toBeGreaterThan(0);
        expect((await stat(path.join(folder, "npm"))).isDirectory()).toBe(true);
      },
    );

    it("build a crate with a git dependency, fetched into the kept cargo home and built from it the second time", async ({
      skip,
    }) => {
      const { sandbox, root, userCache } = await cachedSandbox();
      const version = await sandbox.exec("cargo --version");
      // rustup's cargo needs ~/.rustup, out of the commands' view unless given back (--allow-read).
      if (version.exitCode !== 0) {
        skip(
          `cargo does not run in the sandbox here: ${(version.stderr || version.stdout).trim().split("\n")[0]}`,
        );
      }
      // The dependency is a repository of its own in the workspace, fetched by its file:// URL
      // (no network here): cargo keeps its clone and checkout in $CARGO_HOME/git.
      const dependency = path.join(root, "dep-source");
      await mkdir(path.join(dependency, "src"), { recursive: true });
      await writeFile(
        path.join(dependency, "Cargo.toml"),
        '[package]\nname = "dep"\nversion = "0.1.0"\nedition = "2021"\n',
      );
      await writeFile(
        path.join(dependency, "src", "lib.rs"),
        'pub fn shout() -> &\'static str { "HI!" }\n',
      );
      const git = (...args: string[]) =>
        spawnSync("git", ["-C", dependency, ...args], { encoding: "utf8" });
      git("init", "-q");
      git("add", "-A");
      expect(
        git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "dep")
          .status,
      ).toBe(0);
      await mkdir(path.join(root, "src"));
      await writeFile(
        path.join(root, "Cargo.toml"),
        `[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\ndep = { git = "file://${dependency}" }\n\n[workspace]\nexclude = ["dep-source"]\n`,
      );
      await writeFile(
        path.join(root, "src", "main.rs"),
        'fn main() { println!("{}", dep::shout()); }\n',
      );
      const built = succeeded(
        await sandbox.exec('echo "$CARGO_HOME" && cargo run -q', { timeoutMs: 300_000 }),
      );
      const kept = path.join(await cacheFolderOf(userCache), "cargo");
      expect(built.stdout).toBe(`${kept}\nHI!\n`);
      expect(await entriesBelow(path.join(kept, "git", "db"))).toBeGreaterThan(0);
      // The source is gone and the build cleaned: only the kept cargo home has the dependency.
      await rm(dependency, { recursive: true, force: true });
      const again = succeeded(
        await sandbox.exec("cargo clean -q && cargo run --offline -q", { timeoutMs: 300_000 }),
      );
      expect(again.stdout).toBe("HI!\n");
    });
  },
);
