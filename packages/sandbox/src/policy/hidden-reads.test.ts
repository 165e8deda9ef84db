import { existsSync, readdirSync } from "node:fs";
import {
  chmod,
  chown,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { SandboxMode } from "@pleach/core/sandbox";
import { cleanUpAfter, useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";
import { attackSuiteSkipReason } from "../os/test-support/suite.js";
import { isInside } from "../paths.js";
import { defaultCredentialHomes, hiddenReads } from "./hidden-reads.js";
import { CREDENTIAL_STORES } from "./protected-entries.js";

const skipReason = await attackSuiteSkipReason();
const CONFINED: SandboxMode[] = ["read-only", "workspace-write"];

/** A fake home outside `/tmp` (the sandbox's own `/tmp` would hide it anyway), removed after the test. */
async function fakeHome(): Promise<string> {
  const home = await realpath(await mkdtemp("/var/tmp/pleach-home-"));
  return cleanUpAfter(home, () => rm(home, { recursive: true, force: true }));
}

/** Credential files in `home`, each holding SECRET; `.aws` is a link to a folder elsewhere. */
async function plantCredentials(home: string): Promise<string[]> {
  const files = [
    ".ssh/id_ed25519",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".npmrc",
    ".git-credentials",
    ".netrc",
    ".cargo/credentials.toml",
  ];
  for (const file of files) {
    await mkdir(path.dirname(path.join(home, file)), { recursive: true });
    await writeFile(path.join(home, file), "SECRET\n");
  }
  const elsewhere = path.join(home, "..", `${path.basename(home)}-aws`);
  await mkdir(elsewhere);
  cleanUpAfter(elsewhere, () => rm(elsewhere, { recursive: true, force: true }));
  await writeFile(path.join(elsewhere, "credentials"), "SECRET\n");
  await symlink(elsewhere, path.join(home, ".aws"));
  return [
    ...files.map((file) => path.join(home, file)),
    path.join(home, ".aws/credentials"),
    path.join(elsewhere, "credentials"),
  ];
}

/** One line per file: `HIDDEN` when its SECRET cannot be read, `READ` when it can. */
function readEach(files: readonly string[]): string {
  return files
    .map((file) => `if grep -q SECRET '${file}' 2>/dev/null; then echo READ; else echo HIDDEN; fi`)
    .join("\n");
}

describe("hiddenReads", () => {
  it("hides every credential store of each home, the shadow files and hideReads, at link targets too", async () => {
    const home = await fakeHome();
    await plantCredentials(home);
    const hidden = hiddenReads({
      root: await useTempDir(),
      credentialHomes: [home],
      hideReads: ["/var/tmp/pleach-nothing-here"],
    });
    const byPath = new Map(hidden.map((entry) => [entry.path, entry]));
    for (const { name } of CREDENTIAL_STORES)
      expect(hidden.map(({ path: p }) => p)).toSatisfy((paths: string[]) =>
        paths.some((each) => path.join(home, name).startsWith(each)),
      );
    expect(byPath.get(path.join(home, ".ssh"))).toMatchObject({ state: "folder" });
    expect(byPath.get(path.join(home, ".npmrc"))).toMatchObject({
      state: "file",
      rule: expect.stringContaining("npm registry tokens"),
    });
    expect(byPath.get(path.join(home, ".aws"))).toMatchObject({ state: "link" });
    expect(byPath.get(`${home}-aws`)).toMatchObject({ state: "folder" });
    expect(byPath.get(path.join(home, ".pypirc"))).toMatchObject({ state: "missing" });
    // The system's secrets by their mode: only where the caller could read them at all.
    if (process.getuid?.() === 0) {
      expect(byPath.get("/etc/shadow")?.rule).toContain("others may not read it");
    }
    expect(byPath.get("/var/tmp/pleach-nothing-here")).toMatchObject({ state: "missing" });
  });

  it.skipIf(process.getuid?.() !== 0)(
    "as root: hides the stores present in the homes other users own",
    async () => {
      const victim = await fakeHome();
      await plantCredentials(victim);
      await chown(victim, 4242, 4242);
      const systemFolder = await fakeHome();
      await mkdir(path.join(systemFolder, ".ssh"));
      const userDatabase = path.join(await useTempDir(), "passwd");
      await writeFile(
        userDatabase,
        `victim:x:4242:4242::${victim}:/bin/bash\nsystem:x:4243:4243::${systemFolder}:/usr/sbin/nologin\n`,
      );
      const hidden = hiddenReads({ root: await useTempDir(), credentialHomes: [], userDatabase });
      const byPath = new Map(hidden.map((entry) => [entry.path, entry]));
      expect(byPath.get(path.join(victim, ".ssh"))).toMatchObject({
        state: "folder",
        rule: expect.stringContaining("another user"),
      });
      expect(byPath.get(path.join(victim, ".npmrc"))).toMatchObject({ state: "file" });
      expect(byPath.get(`${victim}-aws`)).toMatchObject({ state: "folder" });
      // Missing stores are not looked for there, and a folder its user does not own is no home.
      expect(byPath.has(path.join(victim, ".pypirc"))).toBe(false);
      expect(byPath.has(path.join(systemFolder, ".ssh"))).toBe(false);
    },
  );

  it("in the workspace scope, finds exactly the hidden paths that meet the workspace", async () => {
    const home = await fakeHome();
    await plantCredentials(home);
    const workspace = await useTempDir();
    await mkdir(path.join(workspace, "config"));
    // A store of the home that is a link into the workspace is hidden there, at its target.
    await symlink(path.join(workspace, "config"), path.join(home, ".kube"));
    const hideReads = [path.join(workspace, "secrets.env"), path.join(home, "notes.txt")];
    // The workspace beside the system folders, the home, inside and holding a searched one.
    for (const root of [workspace, home, "/etc/ssl", "/etc", "/"]) {
      const policy = { root, credentialHomes: [home], hideReads };
      const all = hiddenReads({ ...policy, scope: "host" });
      const meeting = all.filter((entry) => isInside(root, entry.path));
      expect(hiddenReads({ ...policy, scope: "workspace" }), root).toEqual(meeting);
    }
    const inWorkspace = hiddenReads({
      root: workspace,
      credentialHomes: [home],
      scope: "workspace",
    });
    expect(inWorkspace.map((entry) => entry.path)).toEqual([path.join(workspace, "config")]);
  });

  it("in the workspace scope, finds the secrets of a searched system folder that is a link (/opt -> /var/opt)", async () => {
    const base = await useTempDir();
    const project = path.join(base, "real-opt", "project");
    await mkdir(path.join(project, "keys"), { recursive: true });
    await chmod(path.join(project, "keys"), 0o700);
    await writeFile(path.join(project, "keys", "server.key"), "SECRET\n");
    const opt = path.join(base, "opt");
    await symlink(path.join(base, "real-opt"), opt);
    // The caller must be able to read the folder while others may not: its own, or root.
    const policy = {
      root: project,
      credentialHomes: [],
      systemFolders: [{ folder: opt, depth: 2 }],
    };
    const all = hiddenReads({ ...policy, scope: "host" });
    const keys = { path: path.join(project, "keys"), state: "folder" };
    expect(all).toContainEqual(expect.objectContaining(keys));
    expect(hiddenReads({ ...policy, scope: "workspace" })).toEqual(
      all.filter((entry) => isInside(project, entry.path)),
    );
  });

  it("takes a path under a file, or under a folder it may not search, as missing", async () => {
    const home = await fakeHome();
    await writeFile(path.join(home, ".docker"), "a file, not a folder\n");
    const hidden = hiddenReads({ root: await useTempDir(), credentialHomes: [home] });
    expect(
      hidden.find(({ path: each }) => each === path.join(home, ".docker/config.json")),
    ).toMatchObject({
      state: "missing",
    });
  });

  it("gives back what allowReads names, and refuses a path inside a hidden folder", async () => {
    const home = await fakeHome();
    await plantCredentials(home);
    const root = await useTempDir();
    const paths = hiddenReads({
      root,
      credentialHomes: [home],
      allowReads: [path.join(home, ".npmrc"), path.join(home, ".aws")],
    }).map(({ path: each }) => each);
    expect(paths).not.toContain(path.join(home, ".npmrc"));
    expect(paths).not.toContain(`${home}-aws`);
    expect(paths).toContain(path.join(home, ".ssh"));
    expect(() =>
      hiddenReads({ root, credentialHomes: [home], allowReads: [path.join(home, ".ssh/config")] }),
    ).toThrow(
      expect.objectContaining({
        code: "INVALID_INPUT",
        message: expect.stringContaining(`allow ${home}/.ssh itself`),
      }),
    );
  });

  it("refuses a workspace inside a hidden folder, naming the way out", async () => {
    const home = await fakeHome();
    await mkdir(path.join(home, ".password-store/work"), { recursive: true });
    expect(() =>
      hiddenReads({ root: path.join(home, ".password-store/work"), credentialHomes: [home] }),
    ).toThrow(
      expect.objectContaining({
        code: "UNSUPPORTED",
        message: expect.stringContaining("--allow-read"),
      }),
    );
  });

  it("are all listed in docs/sandbox.md", async () => {
    const readme = await readFile(
      path.resolve(import.meta.dirname, "../../../../docs/sandbox.md"),
      "utf8",
    );
    for (const { name, why } of CREDENTIAL_STORES)
      expect(readme).toContain(`- \`~/${name}\`: ${why}\n`);
  });

  it("takes the homes from the user database and HOME", () => {
    const homes = defaultCredentialHomes({ HOME: "/var/tmp/elsewhere" });
    expect(homes).toContain(os.userInfo().homedir);
    expect(homes).toContain("/var/tmp/elsewhere");
    expect(defaultCredentialHomes({ HOME: "/" })).toEqual([os.userInfo().homedir]);
  });
});

describe.skipIf(skipReason !== undefined)("credential files hidden from commands", () => {
  it("hides coding agents' own logins and Hugging Face's token", async () => {
    // A model API key is what a hostile model's command would look for first.
    const home = await fakeHome();
    const files = [
      ".claude/.credentials.json",
      ".codex/auth.json",
      ".gemini/oauth_creds.json",
      ".config/github-copilot/apps.json",
      ".local/share/opencode/auth.json",
      ".cache/huggingface/token",
      ".huggingface/token",
    ].map((file) => path.join(home, file));
    for (const file of files) {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, "SECRET\n");
    }
    const client = await createLocalSandbox({
      root: await useTempDir(),
      mode: "read-only",
      commandWrapper: createCommandWrapper({ credentialHomes: [home], warmIdleMs: 0 }),
    });
    const { stdout } = await client.exec(readEach(files));
    expect(stdout.trim().split("\n")).toEqual(files.map(() => "HIDDEN"));
  });

  it.each(CONFINED)(
    "%s: a user's credential files are unreadable, readable again with allowReads",
    async (mode) => {
      const home = await fakeHome();
      const files = await plantCredentials(home);
      const root = await useTempDir();
      const hidden = await createLocalSandbox({
        root,
        mode,
        commandWrapper: createCommandWrapper({ credentialHomes: [home], warmIdleMs: 0 }),
      });
      const { stdout } = await hidden.exec(`${readEach(files)}\nls '${home}/.ssh' || true`);
      expect(stdout.trim().split("\n").slice(0, files.length)).toEqual(files.map(() => "HIDDEN"));
      expect(stdout).not.toContain("id_ed25519");

      const allowed = await createLocalSandbox({
        root,
        mode,
        commandWrapper: createCommandWrapper({
          credentialHomes: [home],
          allowReads: [path.join(home, ".npmrc"), path.join(home, ".ssh")],
          warmIdleMs: 0,
        }),
      });
      const again = await allowed.exec(readEach(files));
      expect(again.stdout.trim().split("\n")).toEqual(
        files.map((file) => (/\.npmrc$|\.ssh\//.test(file) ? "READ" : "HIDDEN")),
      );
    },
  );

  it.each(CONFINED)("%s: hideReads hides more, a folder and a file", async (mode) => {
    const outside = await fakeHome();
    await mkdir(path.join(outside, "vault"));
    await writeFile(path.join(outside, "vault/key"), "SECRET\n");
    await writeFile(path.join(outside, "token"), "SECRET\n");
    await writeFile(path.join(outside, "kept"), "SECRET\n");
    const client = await createLocalSandbox({
      root: await useTempDir(),
      mode,
      commandWrapper: createCommandWrapper({
        hideReads: [path.join(outside, "vault"), path.join(outside, "token")],
        warmIdleMs: 0,
      }),
    });
    const files = ["vault/key", "token", "kept"].map((file) => path.join(outside, file));
    const { stdout } = await client.exec(readEach(files));
    expect(stdout.trim().split("\n")).toEqual(["HIDDEN", "HIDDEN", "READ"]);
  });

  it("keeps commands and the file tools from planting the configs aws, kubectl, docker, cargo and yarn run programs from, in a home that is the workspace", async () => {
    // ~/.aws/config's credential_process, ~/.kube/config's exec plugin, ~/.docker/cli-plugins,
    // cargo's build.rustc-wrapper and yarn's yarnPath all run a program on the host later.
    const home = await fakeHome();
    const client = await createLocalSandbox({
      root: home,
      mode: "workspace-write",
      commandWrapper: createCommandWrapper({
        credentialHomes: [home],
        hostEnvironment: { ...process.env, HOME: home },
        warmIdleMs: 0,
      }),
    });
    const files = [
      ".aws/config",
      ".kube/config",
      ".docker/cli-plugins/docker-evil",
      ".cargo/config.toml",
      ".yarnrc.yml",
    ];
    for (const file of files) {
      await expect(client.writeFile(file, "planted\n"), file).rejects.toMatchObject({
        code: "PROTECTED_PATH",
      });
    }
    const plant = files
      .map(
        (file) => `mkdir -p "$(dirname ${file})" 2>/dev/null; echo planted > ${file} 2>/dev/null`,
      )
      .join("\n");
    await client.exec(plant);
    for (const file of files) expect(existsSync(path.join(home, file)), file).toBe(false);
  });

  it("hides the credential stores of a home that is the workspace, also after a rename of their folder", async () => {
    const home = await fakeHome();
    const files = await plantCredentials(home);
    const client = await createLocalSandbox({
      root: home,
      mode: "workspace-write",
      commandWrapper: createCommandWrapper({ credentialHomes: [home], warmIdleMs: 0 }),
    });
    const first = await client.exec(`${readEach(files)}\nmv .config moved 2>/dev/null; true`);
    expect(first.stdout.trim().split("\n")).toEqual(files.map(() => "HIDDEN"));
    const moved = [path.join(home, "moved/gh/hosts.yml"), path.join(home, ".config/gh/hosts.yml")];
    const second = await client.exec(readEach(moved));
    expect(second.stdout.trim().split("\n")).toEqual(["HIDDEN", "HIDDEN"]);
  });

  it.skipIf(process.getuid?.() !== 0)("as root: the shadow files read as empty", async () => {
    const root = await useTempDir();
    const shadows = ["/etc/shadow", "/etc/gshadow"].filter((file) => existsSync(file));
    expect(shadows).toContain("/etc/shadow");
    const check = shadows
      .map((file) => `if grep -q '^root:' ${file}; then echo READ; else echo HIDDEN; fi`)
      .join("\n");
    const control = await createLocalSandbox({ root, mode: "danger-full-access" });
    expect((await control.exec(check)).stdout.trim().split("\n")).toEqual(
      shadows.map(() => "READ"),
    );
    for (const mode of CONFINED) {
      const client = await createLocalSandbox({ root, mode });
      expect((await client.exec(check)).stdout.trim().split("\n")).toEqual(
        shadows.map(() => "HIDDEN"),
      );
    }
  });

  const realSsh = path.join(os.userInfo().homedir, ".ssh");
  it.skipIf(!existsSync(realSsh))("the real home's .ssh cannot be listed or read", async () => {
    const files = readdirSync(realSsh).map((name) => path.join(realSsh, name));
    const client = await createLocalSandbox({ root: await useTempDir(), mode: "read-only" });
    const { stdout } = await client.exec(
      `ls -A '${realSsh}' 2>/dev/null | wc -l\n${files.map((file) => `cat '${file}' 2>/dev/null | wc -c`).join("\n")}`,
    );
    expect(stdout.trim().split("\n").map(Number)).toEqual([0, ...files.map(() => 0)]);
  });
});
