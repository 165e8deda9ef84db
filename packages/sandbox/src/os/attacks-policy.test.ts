import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { linkSync, utimesSync, writeFileSync } from "node:fs";
import { chmod, mkdir, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { createLocalSandbox, type LocalSandbox } from "../local-sandbox.js";
import { hiddenReads } from "../policy/hidden-reads.js";
import { createCommandWrapper } from "./create-command-wrapper.js";
import {
  createHostFactsCache,
  currentProtection,
  gatherHostFacts,
  type HostFactsCache,
} from "./host-facts.js";

// Attacks on the policy between calls: a change completed before a call must show in that call's
// policy, however it was made (many move no stamp of a folder the walk looks at).

const linux = process.platform === "linux";

/** Whether python3 is here to hold a shared writable memory map of a file. */
const python = (() => {
  try {
    execFileSync("python3", ["-c", "import mmap"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/**
 * A process holding a shared writable map of `file`: each `write(text)` copies `text` over the
 * start of the map (as a command that opened the file before it was protected could).
 */
async function mapped(file: string) {
  const child: ChildProcessWithoutNullStreams = spawn("python3", [
    "-c",
    [
      "import mmap, os, sys",
      "fd = os.open(sys.argv[1], os.O_RDWR)",
      "m = mmap.mmap(fd, 0)",
      "for line in sys.stdin:",
      "    data = bytes.fromhex(line.strip())",
      "    m[0:len(data)] = data",
      "    print('ok', flush=True)",
    ].join("\n"),
    file,
  ]);
  const write = async (text: string) => {
    const answered = once(child.stdout, "data");
    child.stdin.write(`${Buffer.from(text).toString("hex")}\n`);
    await answered;
  };
  return { write, close: () => child.kill() };
}

/**
 * A process counting the opens of `file` (inotify `IN_OPEN`, which the kernel queues as the open
 * happens): `opens()` says how many since the last ask.
 */
async function openCounter(file: string) {
  const child = spawn("python3", [
    "-c",
    [
      "import ctypes, os, sys",
      "libc = ctypes.CDLL('libc.so.6', use_errno=True)",
      "fd = libc.inotify_init1(os.O_NONBLOCK)",
      "if libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20) < 0: sys.exit('no watch')",
      "print('ready', flush=True)",
      "for line in sys.stdin:",
      "    opens = 0",
      "    try:",
      "        while True: opens += len(os.read(fd, 4096)) // 16",
      "    except BlockingIOError: pass",
      "    print(opens, flush=True)",
    ].join("\n"),
    file,
  ]);
  await once(child.stdout, "data");
  const opens = async () => {
    const answered = once(child.stdout, "data");
    child.stdin.write("\n");
    return Number(String((await answered)[0]).trim());
  };
  return { opens, close: () => child.kill() };
}

describe.skipIf(!linux)("the policy against changes that move no stamp (Linux)", () => {
  let cache: HostFactsCache;
  let root: string;
  beforeEach(async () => {
    cache = createHostFactsCache();
    root = await realpath(await useTempDir({ prefix: "pleach-memo-attack-" }));
    return () => cache.close();
  });
  const protectedNow = async () =>
    (await currentProtection({ root, cache, hostEnvironment: {} })).paths.map((each) => each.path);

  it.skipIf(!python)(
    "opens no file named for the policy that is no regular file (a device can act on open; counted by python3)",
    async () => {
      execFileSync("git", ["init", "-q", root]);
      const fifo = path.join(root, "fifo");
      execFileSync("mkfifo", [fifo]);
      execFileSync("git", ["-C", root, "config", "include.path", "../fifo"]);
      const counter = await openCounter(fifo);
      try {
        for (let time = 0; time < 3; time += 1) await protectedNow();
        expect(await counter.opens()).toBe(0);
      } finally {
        counter.close();
      }
    },
  );

  it.skipIf(!python)(
    "sees a git config rewritten through a shared memory map that was written to before (no new stamp; written by python3)",
    async () => {
      execFileSync("git", ["init", "-q", root]);
      const config = path.join(root, ".git", "config");
      const padded = (text: string) => `${text}${"#".repeat(400 - text.length - 1)}\n`;
      writeFileSync(config, padded("[core]\n\tbare = false\n"));
      const map = await mapped(config);
      try {
        // The first write through the map moves the file's stamp; later ones, until the kernel
        // writes the page back (half a minute), do not.
        await map.write("[core]\n\tbare = false\n");
        await new Promise((resolve) => setTimeout(resolve, 2_100));
        expect(await protectedNow()).not.toContain(path.join(root, "hooks"));
        await map.write("[core]\n\thooksPath=hooks\n");
        expect(await protectedNow()).toContain(path.join(root, "hooks"));
      } finally {
        map.close();
      }
    },
    20_000,
  );
});

describe.skipIf(!linux || process.getuid?.() !== 0)(
  "the facts of a root caller (as root, on Linux)",
  () => {
    it("hides a store made since in another user's home", async () => {
      const dir = await useTempDir({ prefix: "pleach-memo-users-" });
      const own = path.join(dir, "own");
      const other = path.join(dir, "other");
      await mkdir(own);
      await mkdir(other);
      // A user database whose other user (uid 0: the home is ours) has its home there.
      const users = path.join(dir, "passwd");
      await writeFile(users, `other:x:0:0::${other}:/bin/sh\n`);
      const get = () =>
        hiddenReads({ root: dir, credentialHomes: [own], userDatabase: users }).map(
          (each) => each.path,
        );
      for (let time = 0; time < 3; time += 1) expect(get()).not.toContain(path.join(other, ".aws"));
      await mkdir(path.join(other, ".aws"));
      expect(get()).toContain(path.join(other, ".aws"));
    });
  },
);

describe.skipIf(!linux)("the facts where the home is on another file system (Linux)", () => {
  let cache: HostFactsCache;
  let root: string;
  beforeEach(async () => {
    cache = createHostFactsCache();
    root = await useTempDir({ prefix: "pleach-memo-fs-" });
    return () => cache.close();
  });
  const hidden = async (home: string) =>
    (
      await gatherHostFacts({
        root,
        cache,
        hostEnvironment: { HOME: home },
        readPolicy: { credentialHomes: [home] },
      })
    ).hiddenPaths;
  /** Gather a few times, so that later calls read the walk by stamps. */
  async function settle(home: string): Promise<void> {
    for (let time = 0; time < 3; time += 1) await hidden(home);
  }
  const netrc = (home: string) =>
    expect.objectContaining({ path: path.join(home, ".netrc"), state: "file" });

  it("hides a store made since in a home on tmpfs", async () => {
    const home = await useTempDir({ prefix: "pleach-memo-home-", parent: "/dev/shm" });
    await settle(home);
    expect(await hidden(home)).not.toContainEqual(netrc(home));
    await writeFile(path.join(home, ".netrc"), "machine x password y\n");
    expect(await hidden(home)).toContainEqual(netrc(home));
  });

  it("hides a store made since through the other path of a bind-mounted home", async (context) => {
    const real = await useTempDir({ prefix: "pleach-memo-real-" });
    const home = await useTempDir({ prefix: "pleach-memo-home-" });
    try {
      execFileSync("mount", ["--bind", real, home], { stdio: "ignore" });
    } catch {
      context.skip("needs to bind-mount (root, where mounts are allowed)");
    }
    try {
      await settle(home);
      await writeFile(path.join(real, ".netrc"), "machine x password y\n");
      expect(await hidden(home)).toContainEqual(netrc(home));
    } finally {
      execFileSync("umount", [home]);
    }
  });
});

const probe = await createLocalSandbox({ root: process.cwd(), session: true });
const sessions = probe.backend === "bubblewrap";
await probe.close();

// The repository cases again with git writes: commands may then write in a .git, but for its hooks.
for (const allowGitWrites of [false, true]) {
  describe.skipIf(!sessions)(
    `a session sandbox kept up between calls (${sessions ? "bubblewrap" : "needs bubblewrap"})${allowGitWrites ? ", with git writes" : ""}`,
    () => {
      let root: string;
      let home: string;
      let client: LocalSandbox;
      beforeEach(async () => {
        root = await useTempDir({ prefix: "pleach-memo-session-" });
        // A home in the workspace: commands see it (a home elsewhere they see empty), so there its
        // credential stores are hidden by the list, which each call must find as it is now.
        home = path.join(root, "home");
        await mkdir(home);
        client = await createLocalSandbox({
          root,
          session: true,
          commandWrapper: createCommandWrapper({ credentialHomes: [home], allowGitWrites }),
        });
        return () => client.close();
      });
      /** Run `true` a few times, so that later calls read the walk by stamps. */
      const idle = async () => {
        for (let run = 0; run < 4; run += 1) expect((await client.exec("true")).exitCode).toBe(0);
      };
      const reads = async (file: string) => (await client.exec(`cat ${file}`)).stdout;

      // The credential stores are the same with git writes or without.
      if (!allowGitWrites) {
        it("hides a credential store made, swapped by rename or reached by a re-pointed link since", async () => {
          // The home is in the commands' view (in the workspace): only what is hidden is not read.
          await writeFile(path.join(home, "notes"), "seen\n");
          expect(await reads(path.join(home, "notes"))).toBe("seen\n");
          await idle();
          await mkdir(path.join(home, ".ssh"));
          await writeFile(path.join(home, ".ssh", "id"), "made\n");
          expect(await reads(path.join(home, ".ssh", "id"))).toBe("");
          await idle();
          // Swapped by rename for a folder holding another key.
          await mkdir(path.join(home, "next"));
          await writeFile(path.join(home, "next", "id"), "swapped\n");
          await rename(path.join(home, ".ssh"), path.join(home, "old"));
          await rename(path.join(home, "next"), path.join(home, ".ssh"));
          expect(await reads(path.join(home, ".ssh", "id"))).toBe("");
          await idle();
          // A link, relative and through "..", re-pointed to a folder holding a key.
          await rm(path.join(home, ".ssh"), { recursive: true });
          await mkdir(path.join(home, "a", "deep"), { recursive: true });
          await mkdir(path.join(home, "b"));
          await writeFile(path.join(home, "b", "id"), "linked\n");
          await symlink("a/deep/..", path.join(home, ".ssh"));
          expect(await reads(path.join(home, ".ssh", "id"))).toBe("");
          await idle();
          await rm(path.join(home, ".ssh"));
          await symlink("b/../b", path.join(home, ".ssh"));
          expect(await reads(path.join(home, ".ssh", "id"))).toBe("");
          expect(await reads(path.join(home, "b", "id"))).toBe("");
        }, 60_000);

        it("hides a store reached through a folder it may not list, a link loop or a file, changed since", async () => {
          // Through a folder with search but no read permission.
          await mkdir(path.join(home, "locked", "keys"), { recursive: true });
          await symlink("locked/keys", path.join(home, ".ssh"));
          await chmod(path.join(home, "locked"), 0o311);
          await idle();
          await mkdir(path.join(home, "locked", "next"));
          await writeFile(path.join(home, "locked", "next", "id"), "swapped\n");
          await rename(path.join(home, "locked", "keys"), path.join(home, "locked", "old"));
          await rename(path.join(home, "locked", "next"), path.join(home, "locked", "keys"));
          expect(await reads(path.join(home, "locked", "keys", "id"))).toBe("");
          expect(await reads(path.join(home, ".ssh", "id"))).toBe("");
          await chmod(path.join(home, "locked"), 0o755);
          // A link loop, untied since.
          await symlink(".aws2", path.join(home, ".aws"));
          await symlink(".aws", path.join(home, ".aws2"));
          await idle();
          await rm(path.join(home, ".aws2"));
          await mkdir(path.join(home, ".aws2"));
          await writeFile(path.join(home, ".aws2", "credentials"), "untied\n");
          expect(await reads(path.join(home, ".aws", "credentials"))).toBe("");
          expect(await reads(path.join(home, ".aws2", "credentials"))).toBe("");
          // A path component that was a file, a folder since.
          await writeFile(path.join(home, ".config"), "a file\n");
          await idle();
          await rm(path.join(home, ".config"));
          await mkdir(path.join(home, ".config", "gcloud"), { recursive: true });
          await writeFile(path.join(home, ".config", "gcloud", "token"), "made\n");
          expect(await reads(path.join(home, ".config", "gcloud", "token"))).toBe("");
        }, 60_000);
      }

      it("refuses by name, not by ELOOP, after a link loop is made on the way to a hooks folder", async () => {
        await idle();
        // The repository is the host's (one a command made would be made inert when it ends), and
        // so is the loop (what a command makes at the hooks folder's place is moved aside when it ends).
        execFileSync("git", ["init", "-q", path.join(root, "sub")]);
        await symlink("loop", path.join(root, "loop"));
        execFileSync("git", [
          "-C",
          path.join(root, "sub"),
          "config",
          "core.hooksPath",
          "../loop/hooks",
        ]);
        // The link is on the way to a path git uses: workspace-write commands are refused, saying
        // which link to replace; the file tools write elsewhere.
        await expect(client.exec("echo ran")).rejects.toMatchObject({
          code: "PROTECTED_PATH",
          message: expect.stringContaining("loop in the workspace is a symbolic link"),
        });
        await client.writeFile("notes.txt", "written");
        await expect(client.writeFile("loop/hooks/x", "x")).rejects.toThrow();
      }, 60_000);

      it("protects a nested repository made since, on the host or by a command", async () => {
        await idle();
        expect(
          (await client.exec("mkdir -p plain/.gi/hooks && echo x > plain/.gi/hooks/x")).exitCode,
        ).toBe(0);
        execFileSync("git", ["init", "-q", path.join(root, "host")]);
        const write = (target: string) => client.exec(`echo x > ${target}`);
        expect((await write("host/.git/hooks/pre-commit")).exitCode).not.toBe(0);
        await idle();
        expect((await client.exec("git init -q inner")).exitCode).toBe(0);
        expect((await write("inner/.git/hooks/pre-commit")).exitCode).not.toBe(0);
        await idle();
        // A hooks folder named in the config since, through an included file.
        await writeFile(path.join(root, "inner.cfg"), "[core]\n\thooksPath = ../hooks\n");
        await mkdir(path.join(root, "hooks"));
        execFileSync("git", [
          "-C",
          path.join(root, "inner"),
          "config",
          "include.path",
          "../../inner.cfg",
        ]);
        expect((await write("hooks/pre-commit")).exitCode).not.toBe(0);
      }, 60_000);
    },
  );
}

describe.skipIf(!linux)("gatherHostFacts between calls (Linux)", () => {
  let cache: HostFactsCache;
  let root: string;
  let home: string;
  beforeEach(async () => {
    cache = createHostFactsCache();
    root = await realpath(await useTempDir({ prefix: "pleach-memo-root-" }));
    home = await realpath(await useTempDir({ prefix: "pleach-memo-home-" }));
    return () => cache.close();
  });
  const gather = (gitWrites = false) =>
    gatherHostFacts({
      root,
      cache,
      hostEnvironment: { HOME: home },
      readPolicy: { credentialHomes: [home] },
      gitWrites,
    });
  /** Gather past the first walk, so that the next call reads only by stamps. */
  async function settled(gitWrites = false) {
    await gather(gitWrites);
    const facts = await gather(gitWrites);
    expect(facts.walk.tracking).toBe("stamps");
    return facts;
  }

  it("hides a credential store made meanwhile", async () => {
    const before = await settled();
    expect(before.hiddenPaths).toContainEqual(
      expect.objectContaining({ path: path.join(home, ".ssh"), state: "missing" }),
    );
    await mkdir(path.join(home, ".ssh"));
    const after = await gather();
    expect(after.hiddenPaths).toContainEqual(
      expect.objectContaining({ path: path.join(home, ".ssh"), state: "folder" }),
    );
  });

  // With git writes too: the .git folder is then writable but for what git runs, and its config
  // is read as it is now all the same.
  for (const gitWrites of [false, true]) {
    const writes = gitWrites ? ", with git writes" : "";
    it(`protects a hooks folder set in the repository's config meanwhile${writes}`, async () => {
      execFileSync("git", ["init", "-q", root]);
      // Old enough that the config's stamp is trusted.
      const config = path.join(root, ".git", "config");
      utimesSync(config, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      const before = await settled(gitWrites);
      expect(before.protectedPaths.map((each) => each.path)).not.toContain(
        path.join(root, "hooks"),
      );
      execFileSync("git", ["-C", root, "config", "core.hooksPath", "hooks"]);
      const after = await gather(gitWrites);
      expect(after.protectedPaths.map((each) => each.path)).toContain(path.join(root, "hooks"));
    });

    it(`protects a hooks folder named through a hard link of the config in another folder${writes}`, async () => {
      execFileSync("git", ["init", "-q", root]);
      const config = path.join(root, ".git", "config");
      utimesSync(config, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
      linkSync(config, path.join(home, "alias"));
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      const before = await settled(gitWrites);
      expect(before.protectedPaths.map((each) => each.path)).not.toContain(
        path.join(root, "hooks"),
      );
      writeFileSync(path.join(home, "alias"), "[core]\n\thooksPath = hooks\n");
      const after = await gather(gitWrites);
      expect(after.protectedPaths.map((each) => each.path)).toContain(path.join(root, "hooks"));
    });
  }
});
