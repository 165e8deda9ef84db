import { createHash } from "node:crypto";
import {
  chmod,
  lstat,
  mkdir,
  readdir,
  readFile,
  rm,
  rmdir,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import type { HostFacts } from "../os/host-facts.js";
import { seatbeltProfile } from "../os/seatbelt.js";
import { type SandboxPolicy, wrapCommand } from "../os/wrap-command.js";
import { collectGoneWorkspaces } from "./cache-collection.js";
import { emptyFolder, folderBytes } from "./cache-pruning.js";
import {
  CACHE_VARIABLES,
  cacheEnvironment,
  cacheFolderName,
  workspaceCacheFolder,
} from "./caches.js";
import { WorkspaceCaches } from "./workspace-caches.js";

/** The folders pleach makes, from the user's cache folder down, with their modes. */
async function modesBelow(base: string, folder: string): Promise<Record<string, string>> {
  const modes: Record<string, string> = {};
  for (let current = folder; current !== base; current = path.dirname(current)) {
    modes[path.relative(base, current)] = ((await stat(current)).mode & 0o777).toString(8);
  }
  for (const name of await readdir(folder)) {
    modes[name] = ((await stat(path.join(folder, name))).mode & 0o777).toString(8);
  }
  return modes;
}

describe("workspaceCacheFolder", () => {
  it("is the workspace's own folder under the user's cache folder, every folder of it mode 700", async () => {
    const home = await useTempDir("pleach-cache-home-");
    const root = await useTempDir("pleach-cache-root-");
    const found = workspaceCacheFolder({ root, hostEnvironment: { HOME: home } });
    const hash = createHash("sha256").update(root).digest("hex").slice(0, 16);
    expect(found).toEqual({ folder: path.join(home, ".cache", "pleach", "caches", hash) });
    if (!("folder" in found)) return;
    const modes = await modesBelow(path.join(home, ".cache"), found.folder);
    expect(new Set(Object.values(modes))).toEqual(new Set(["700"]));
    expect(Object.keys(modes).sort()).toEqual(
      [
        "pleach",
        "pleach/caches",
        `pleach/caches/${hash}`,
        ...Object.values(CACHE_VARIABLES).map(({ folder }) => folder),
      ].sort(),
    );
    expect(cacheEnvironment(found.folder)).toMatchObject({
      GOCACHE: path.join(found.folder, "go-build"),
      npm_config_cache: path.join(found.folder, "npm"),
    });
  });

  it("follows XDG_CACHE_HOME, and two workspaces get two folders", async () => {
    const base = await useTempDir("pleach-cache-xdg-");
    const one = workspaceCacheFolder({
      root: "/work/one",
      hostEnvironment: { XDG_CACHE_HOME: base },
    });
    const two = workspaceCacheFolder({
      root: "/work/two",
      hostEnvironment: { XDG_CACHE_HOME: base },
    });
    expect("folder" in one && path.dirname(one.folder)).toBe(path.join(base, "pleach", "caches"));
    expect(one).not.toEqual(two);
  });

  it("refuses a folder group or others may enter, and a link in place of one", async () => {
    const base = await useTempDir("pleach-cache-open-");
    await mkdir(path.join(base, "pleach"), { mode: 0o700 });
    await chmod(path.join(base, "pleach"), 0o755);
    const open = workspaceCacheFolder({
      root: "/work/a",
      hostEnvironment: { XDG_CACHE_HOME: base },
    });
    expect(open).toEqual({
      problem: `${path.join(base, "pleach")} has mode 755: group or others may enter it`,
    });
    await chmod(path.join(base, "pleach"), 0o700);
    const elsewhere = await useTempDir("pleach-cache-elsewhere-");
    await symlink(elsewhere, path.join(base, "pleach", "caches"));
    const linked = workspaceCacheFolder({
      root: "/work/a",
      hostEnvironment: { XDG_CACHE_HOME: base },
    });
    expect(linked).toEqual({
      problem: `${path.join(base, "pleach", "caches")} is a symbolic link`,
    });
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it("refuses a cache folder inside the workspace", async () => {
    const root = await useTempDir("pleach-cache-inside-");
    const found = workspaceCacheFolder({
      root,
      hostEnvironment: { XDG_CACHE_HOME: path.join(root, ".cache") },
    });
    expect("problem" in found && found.problem).toMatch(/overlaps the workspace/);
  });

  it("takes back a folder a command replaced with a link, leaving what it named", async () => {
    const base = await useTempDir("pleach-cache-repair-");
    const hostCache = await useTempDir("pleach-cache-host-");
    await writeFile(path.join(hostCache, "entry"), "the user's");
    const first = workspaceCacheFolder({
      root: "/work/r",
      hostEnvironment: { XDG_CACHE_HOME: base },
    });
    if (!("folder" in first)) throw new Error(first.problem);
    const goBuild = path.join(first.folder, "go-build");
    await rmdir(goBuild);
    await symlink(hostCache, goBuild);
    await chmod(path.join(first.folder, "npm"), 0o777);
    const again = workspaceCacheFolder({
      root: "/work/r",
      hostEnvironment: { XDG_CACHE_HOME: base },
    });
    expect(again).toEqual(first);
    expect((await lstat(goBuild)).isDirectory()).toBe(true);
    expect(((await stat(path.join(first.folder, "npm"))).mode & 0o777).toString(8)).toBe("700");
    expect(await readFile(path.join(hostCache, "entry"), "utf8")).toBe("the user's");
  });
});

describe("emptyFolder and folderBytes", () => {
  it.each([
    ["in place", false],
    ["moved aside first", true],
  ])(
    "empty Go's read-only module cache and remove planted links as links (%s)",
    async (_, moved) => {
      const cache = await useTempDir("pleach-cache-prune-");
      const aside = moved
        ? path.join(path.dirname(cache), `${path.basename(cache)}-aside`)
        : undefined;
      const host = await useTempDir("pleach-cache-victim-");
      const victim = path.join(host, "precious");
      await writeFile(victim, "x".repeat(100_000));
      await chmod(victim, 0o600);
      await mkdir(path.join(host, "folder"));
      await writeFile(path.join(host, "folder", "inside"), "kept");
      // As `go mod download` leaves it: files 444 in folders 555.
      const module = path.join(cache, "go-mod", "example.com", "dep@v0.1.0");
      await mkdir(module, { recursive: true });
      await writeFile(path.join(module, "dep.go"), "package dep\n");
      await chmod(path.join(module, "dep.go"), 0o444);
      await chmod(module, 0o555);
      await chmod(path.dirname(module), 0o555);
      await symlink(victim, path.join(cache, "to-file"));
      await symlink(path.join(host, "folder"), path.join(cache, "go-mod", "to-folder"));
      await symlink(host, path.join(cache, "to-host"));

      const bytes = await folderBytes(cache);
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThan(100_000);

      await emptyFolder(cache, aside);
      expect(await readdir(cache)).toEqual([]);
      if (aside !== undefined) await expect(lstat(aside)).rejects.toThrow(/ENOENT/);
      expect(await readFile(victim, "utf8")).toHaveLength(100_000);
      expect(((await stat(victim)).mode & 0o777).toString(8)).toBe("600");
      expect(await readdir(host)).toEqual(["folder", "precious"]);
      expect(await readFile(path.join(host, "folder", "inside"), "utf8")).toBe("kept");
      expect(((await stat(path.join(host, "folder"))).mode & 0o777).toString(8)).toBe("755");
    },
  );
});

describe("WorkspaceCaches", () => {
  it("measures at the first command, empties a cache over its bound once no command holds it, and says so", async () => {
    const base = await useTempDir("pleach-cache-bound-");
    const root = await useTempDir("pleach-cache-bound-root-");
    const caches = new WorkspaceCaches({
      maxBytes: 64 * 1024,
      hostEnvironment: { XDG_CACHE_HOME: base },
      checkIntervalMs: 0,
    });
    const first = caches.take(root);
    expect(first.notes).toEqual([]);
    await caches.settled();
    const folder = first.folder as string;
    await writeFile(path.join(folder, "go-build", "big"), Buffer.alloc(256 * 1024, 1));
    const second = caches.take(root);
    first.done();
    // Measured once the first ended; over the bound, but the second still holds it.
    await caches.settled();
    expect(await readdir(path.join(folder, "go-build"))).toEqual(["big"]);
    second.done();
    await caches.settled();
    expect(await readdir(folder)).toEqual([]);
    const third = caches.take(root);
    expect(third.notes).toEqual([
      expect.stringMatching(
        /^sandbox: this workspace's caches \(.*\) held [0-9,]+ bytes( \(\d+ KiB\))?, over their bound of 65,536 bytes \(64 KiB\), and were emptied/,
      ),
    ]);
    expect((await readdir(folder)).sort()).toEqual(
      Object.values(CACHE_VARIABLES)
        .map(({ folder: sub }) => sub)
        .sort(),
    );
    third.done();
  });

  it("tells once why a workspace gets no caches, and gives no variables", async () => {
    const base = await useTempDir("pleach-cache-problem-");
    await mkdir(path.join(base, "pleach"), { mode: 0o700 });
    await chmod(path.join(base, "pleach"), 0o777);
    const caches = new WorkspaceCaches({
      maxBytes: 1024,
      hostEnvironment: { XDG_CACHE_HOME: base },
    });
    const first = caches.take("/work/problem");
    expect(first.folder).toBeUndefined();
    expect(first.environment).toEqual({});
    expect(first.notes).toEqual([
      `sandbox: commands get no kept caches here: ${path.join(base, "pleach")} has mode 777: group or others may enter it. Their tools write caches in the private /tmp, emptied after each command; fix the folder, or turn caches off (caches: false, --no-caches) to drop this note.`,
    ]);
    expect(caches.take("/work/problem").notes).toEqual([]);
  });

  it("gives no caches in a folder hidden from commands", async () => {
    const base = await useTempDir("pleach-cache-hidden-");
    const caches = new WorkspaceCaches({
      maxBytes: 1024,
      hostEnvironment: { XDG_CACHE_HOME: base },
    });
    const turn = caches.take("/work/hidden", [{ path: base }]);
    expect(turn.folder).toBeUndefined();
    expect(turn.notes).toEqual([
      expect.stringContaining(`no kept caches here: ${base} is hidden from commands.`),
    ]);
  });
});

describe("the cache folder in the sandbox's argv", () => {
  const cache = "/home/ada/.cache/pleach/caches/0123456789abcdef";
  const hostFacts: HostFacts = {
    root: "/home/ada/project",
    unreadableFolders: [],
    protectedPaths: [],
    hiddenPaths: [],
    hostSockets: [],
    runPathsToKeep: [],
    varRunIsDirectory: false,
    inheritedEnvironment: { PATH: "/usr/bin:/bin", HOME: "/home/ada", TMPDIR: "/tmp" },
    temporaryDirectory: "/tmp",
    walk: { directories: 1, truncated: false, listed: 1, tracking: "stamps" },
    gitEntries: [],
    bubblewrap: { path: "/usr/bin/bwrap", disableUserNamespaces: true },
    readView: {
      emptied: [
        { path: "/home", state: "folder" },
        { path: "/home/ada", state: "folder" },
      ],
      shown: [],
    },
  };
  const policy: SandboxPolicy = {
    backend: "bubblewrap",
    mode: "read-only",
    cwd: "/home/ada/project",
    network: false,
    env: { ...cacheEnvironment(cache), GOCACHE: "/tmp/mine" },
    caches: cache,
  };

  it("is bound writable after the home is emptied, the folders on the way to it read-only", () => {
    const { args } = wrapCommand({ command: "go build", policy, hostFacts });
    const text = args.join(" ");
    const order = [
      "--perms 0555 --tmpfs /home/ada",
      "--perms 0555 --dir /home/ada/.cache --perms 0555 --dir /home/ada/.cache/pleach --perms 0555 --dir /home/ada/.cache/pleach/caches",
      `--bind ${cache} ${cache}`,
      "--ro-bind /home/ada/project /home/ada/project",
      "--setenv GOCACHE /tmp/mine",
    ].map((part) => text.indexOf(part));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((left, right) => left - right)).toEqual(order);
    expect(text).toContain(`--setenv npm_config_cache ${cache}/npm`);
    expect(text).not.toContain("/tmp/.npm");
  });

  it("is writable under Seatbelt", () => {
    const profile = seatbeltProfile({ policy: { ...policy, backend: "seatbelt" }, hostFacts });
    expect(profile).toContain(
      `(require-all (require-any (subpath "/private/tmp") (subpath "/tmp") (subpath "${cache}"))`,
    );
  });
});

describe("collectGoneWorkspaces", () => {
  it("removes the caches of workspaces that are gone, and what a dead process left aside", async () => {
    const base = await useTempDir("pleach-cache-collect-");
    const kept = await useTempDir("pleach-cache-collect-kept-");
    const gone = await useTempDir("pleach-cache-collect-gone-");
    const victim = path.join(kept, "precious");
    await writeFile(victim, "the user's");
    const caches = new WorkspaceCaches({
      maxBytes: 2 ** 30,
      hostEnvironment: { XDG_CACHE_HOME: base },
    });
    for (const root of [kept, gone]) caches.take(root).done();
    await caches.settled();
    const folders = path.join(base, "pleach", "caches");
    const goneFolder = path.join(folders, cacheFolderName(gone));
    await symlink(victim, path.join(goneFolder, "go-build", "link"));
    await mkdir(path.join(goneFolder, "go-mod", "m@v1"), { recursive: true });
    await chmod(path.join(goneFolder, "go-mod", "m@v1"), 0o555);
    await rm(gone, { recursive: true });
    await mkdir(path.join(folders, ".emptying-0123456789abcdef-999999999-1"));
    await mkdir(path.join(folders, `.emptying-0123456789abcdef-${process.pid}-1`));

    await collectGoneWorkspaces(folders, () => false);
    expect((await readdir(folders)).sort()).toEqual(
      [
        `.emptying-0123456789abcdef-${process.pid}-1`,
        cacheFolderName(kept),
        `${cacheFolderName(kept)}.root`,
      ].sort(),
    );
    expect(await readFile(path.join(folders, `${cacheFolderName(kept)}.root`), "utf8")).toBe(kept);
    expect(await readFile(victim, "utf8")).toBe("the user's");
  });
});
