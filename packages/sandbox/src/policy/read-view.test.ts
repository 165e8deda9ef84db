import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxMode } from "@pleach/core/sandbox";
import { cleanUpAfter, useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { createCommandWrapper } from "../os/create-command-wrapper.js";
import { attackSuiteSkipReason } from "../os/test-support/suite.js";
import { hiddenReads } from "./hidden-reads.js";
import { readView } from "./read-view.js";

const skipReason = await attackSuiteSkipReason();
const CONFINED: SandboxMode[] = ["read-only", "workspace-write"];
const isRoot = process.getuid?.() === 0;

/** A fake home outside `/tmp` (the sandbox's own `/tmp` would hide it anyway), removed after the test. */
async function fakeHome(): Promise<string> {
  const home = await realpath(await mkdtemp("/var/tmp/pleach-view-home-"));
  return cleanUpAfter(home, () => rm(home, { recursive: true, force: true }));
}

/** Stores that no credential list named: each was readable from a read-only command before. */
const UNLISTED_STORES = [
  ".config/google-chrome/Default/Cookies",
  ".config/google-chrome/Default/Login Data",
  ".mozilla/firefox/abc.default-release/logins.json",
  ".mozilla/firefox/abc.default-release/cookies.sqlite",
  ".m2/settings.xml",
  ".gradle/gradle.properties",
  ".terraformrc",
  ".config/sops/age/keys.txt",
  ".docker/key.pem",
  ".bash_history",
  ".zsh_history",
  ".claude.json",
  ".python_history",
  ".psql_history",
  ".composer/auth.json",
  ".bundle/config",
  ".config/op/config",
  ".ngrok2/ngrok.yml",
];

/** Stores moved by the user's own variables (`XDG_CONFIG_HOME=~/dotfiles/config`, ...). */
const RELOCATED_STORES: Record<string, string> = {
  XDG_CONFIG_HOME: "dotfiles/config/gh/hosts.yml",
  CARGO_HOME: "dev/cargo/credentials.toml",
  KUBECONFIG: "clusters/prod.yaml",
  DOCKER_CONFIG: "dev/docker/config.json",
  AWS_SHARED_CREDENTIALS_FILE: "secrets/aws-credentials",
  GNUPGHOME: "keys/gnupg/private-keys-v1.d/0A1B.key",
  CLOUDSDK_CONFIG: "dev/gcloud/credentials.db",
  NPM_CONFIG_USERCONFIG: "dev/npmrc",
  AZURE_CONFIG_DIR: "dev/azure/msal_token_cache.json",
  NETRC: "dev/netrc",
};

async function plant(files: readonly string[]): Promise<void> {
  for (const file of files) {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, "SECRET\n");
  }
}

/** One line per file: `HIDDEN` when its SECRET cannot be read, `READ: file` when it can. */
function readEach(files: readonly string[]): string {
  return files
    .map(
      (file) =>
        `if grep -q SECRET '${file}' 2>/dev/null; then echo 'READ: ${file}'; else echo HIDDEN; fi`,
    )
    .join("\n");
}

describe("readView", () => {
  it("empties the top of the host but the system's folders, and the homes; shows toolchains again", async () => {
    const home = await fakeHome();
    await mkdir(path.join(home, ".cargo/bin"), { recursive: true });
    await writeFile(path.join(home, ".cargo/bin/rustup"), "");
    await mkdir(path.join(home, ".rustup"));
    await mkdir(path.join(home, ".local/bin"), { recursive: true });
    await mkdir(path.join(home, ".local/lib"), { recursive: true });
    await mkdir(path.join(home, "bin"));
    const view = readView({
      root: await useTempDir(),
      homes: [home],
      searchPath: [".cargo/bin", ".local/bin", "bin"]
        .map((entry) => path.join(home, entry))
        .concat("/usr/bin", "relative/bin")
        .join(":"),
      allowReads: [path.join(home, "bin")],
    });
    const emptied = view.emptied.map((each) => each.path);
    expect(emptied).toContain(home);
    for (const system of ["/usr", "/etc", "/var", "/proc", "/tmp"]) {
      expect(emptied).not.toContain(system);
    }
    if (existsSync("/home")) expect(emptied).toContain("/home");
    expect(view.shown.map((each) => each.path).sort()).toEqual(
      [".cargo", ".local/bin", ".local/lib", ".rustup", "bin"].map((each) => path.join(home, each)),
    );
  });
});

describe("the system's secrets by their mode", () => {
  it.skipIf(!isRoot)(
    "as root: a private folder of /var that holds the workspace is no secret; its siblings are",
    async () => {
      const own = await realpath(await mkdtemp("/var/lib/pleach-view-"));
      cleanUpAfter(own, () => rm(own, { recursive: true, force: true }));
      const secret = `${own}-secret`;
      await mkdir(secret, { mode: 0o700 });
      cleanUpAfter(secret, () => rm(secret, { recursive: true, force: true }));
      const root = path.join(own, "workspace");
      await mkdir(root);
      const hidden = hiddenReads({ root, credentialHomes: [] }).map((each) => each.path);
      expect(hidden).toContain(secret);
      expect(hidden).not.toContain(own);
    },
  );
});

describe.skipIf(skipReason !== undefined)("the read view", () => {
  it.each(CONFINED)(
    "%s: no store in a home is readable, listed or not, moved by a variable or not",
    async (mode) => {
      const home = await fakeHome();
      const files = [
        ...UNLISTED_STORES.map((store) => path.join(home, store)),
        ...Object.values(RELOCATED_STORES).map((store) => path.join(home, store)),
      ];
      await plant(files);
      const client = await createLocalSandbox({
        root: await useTempDir(),
        mode,
        commandWrapper: createCommandWrapper({ credentialHomes: [home], warmIdleMs: 0 }),
      });
      // The variables that moved the stores, as the user's shell would set them.
      const env = Object.fromEntries(
        Object.entries(RELOCATED_STORES).map(([name, store]) => [
          name,
          path.join(home, path.dirname(store)),
        ]),
      );
      const { stdout } = await client.exec(`${readEach(files)}\nls -A '${home}'`, { env });
      expect(stdout.trim().split("\n")).toEqual(files.map(() => "HIDDEN"));
    },
  );

  it.skipIf(!isRoot)(
    "as root: the system's secret files are hidden by their mode, other top folders are empty",
    async () => {
      // A secret no list names: only its mode (0600, root's) says what it is.
      const secret = `/etc/pleach-view-secret-${process.pid}`;
      await writeFile(secret, "SECRET\n", { mode: 0o600 });
      cleanUpAfter(secret, () => rm(secret, { force: true }));
      const elsewhere = await mkdtemp("/srv/pleach-view-");
      cleanUpAfter(elsewhere, () => rm(elsewhere, { recursive: true, force: true }));
      await plant([path.join(elsewhere, "credentials")]);
      const files = [secret, "/etc/shadow", path.join(elsewhere, "credentials")];
      const client = await createLocalSandbox({
        root: await useTempDir(),
        mode: "read-only",
        commandWrapper: createCommandWrapper({ warmIdleMs: 0 }),
      });
      const shadow =
        "if grep -q '^root:' /etc/shadow 2>/dev/null; then echo READ; else echo HIDDEN; fi";
      const { stdout } = await client.exec(
        [
          readEach([secret, path.join(elsewhere, "credentials")]),
          shadow,
          "ls /etc/ssl/private >/dev/null 2>&1 && echo READ || echo HIDDEN",
          "ls -A /srv",
        ].join("\n"),
      );
      expect(stdout.trim().split("\n")).toEqual(files.map(() => "HIDDEN").concat("HIDDEN"));
    },
  );

  it("a read outside the view names --allow-read, which gives it back read-only", async () => {
    const home = await fakeHome();
    const file = path.join(home, ".m2/settings.xml");
    await plant([file]);
    const root = await useTempDir();
    const hidden = await createLocalSandbox({
      root,
      mode: "workspace-write",
      commandWrapper: createCommandWrapper({ credentialHomes: [home], warmIdleMs: 0 }),
    });
    const refused = await hidden.exec(`cat '${file}'`);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.sandboxNotes?.join("\n")).toContain(`--allow-read ${file}`);

    const allowed = await createLocalSandbox({
      root,
      mode: "workspace-write",
      commandWrapper: createCommandWrapper({
        credentialHomes: [home],
        allowReads: [path.join(home, ".m2")],
        warmIdleMs: 0,
      }),
    });
    const read = await allowed.exec(
      `cat '${file}'; echo more >> '${file}' 2>/dev/null || echo REFUSED; touch '${home}/new' 2>/dev/null || echo REFUSED`,
    );
    expect(read.stdout).toBe("SECRET\nREFUSED\nREFUSED\n");
  });

  it("--allow-read of a folder under /tmp shows it read-only over the sandbox's own /tmp, and only it", async () => {
    const outside = await useTempDir();
    await mkdir(path.join(outside, "tools"));
    await writeFile(path.join(outside, "tools/server.js"), "SERVER\n");
    await writeFile(path.join(outside, "beside.txt"), "BESIDE\n");
    const client = await createLocalSandbox({
      root: await useTempDir(),
      mode: "workspace-write",
      allowReads: [path.join(outside, "tools")],
    });
    const run = await client.exec(
      [
        `cat '${outside}/tools/server.js'`,
        `echo x >> '${outside}/tools/server.js' 2>/dev/null || echo REFUSED`,
        `cat '${outside}/beside.txt' 2>/dev/null || echo UNSEEN`,
        "touch /tmp/own && echo TMP-WRITABLE",
      ].join("; "),
    );
    expect(run.stdout).toBe("SERVER\nREFUSED\nUNSEEN\nTMP-WRITABLE\n");
  });

  it("the toolchains on PATH still run: node, git, python3, and cargo or go where present", async () => {
    const client = await createLocalSandbox({
      root: await useTempDir(),
      mode: "workspace-write",
      commandWrapper: createCommandWrapper({ warmIdleMs: 0 }),
    });
    const run = await client.exec(
      [
        "set -e",
        "node -e 'console.log(\"node\", 6 * 7)'",
        "git init -q repo && git -C repo status --short && echo git ok",
        "python3 -c 'print(\"python\", 6 * 7)'",
        "if command -v cargo >/dev/null; then cargo --version >/dev/null && echo cargo ok; else echo cargo ok; fi",
        "if command -v go >/dev/null; then go version >/dev/null && echo go ok; else echo go ok; fi",
      ].join("\n"),
    );
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe("node 42\ngit ok\npython 42\ncargo ok\ngo ok\n");
  });
});
