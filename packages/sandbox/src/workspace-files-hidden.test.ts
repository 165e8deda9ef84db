import { link, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SandboxMode } from "@pleach/core/sandbox";
import { cleanUpAfter, useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "./local-sandbox.js";
import { createCommandWrapper } from "./os/create-command-wrapper.js";

/** A fake home outside `/tmp`, with an ssh key and an npm token, removed after the test. */
async function fakeHome(): Promise<string> {
  const home = await realpath(await mkdtemp("/var/tmp/pleach-home-"));
  cleanUpAfter(home, () => rm(home, { recursive: true, force: true }));
  await mkdir(path.join(home, ".ssh"));
  await writeFile(path.join(home, ".ssh/id_ed25519"), "SECRET\n");
  await writeFile(path.join(home, ".npmrc"), "//registry.npmjs.org/:_authToken=SECRET\n");
  await writeFile(path.join(home, "notes.txt"), "mine\n");
  return home;
}

const hiddenPath = (hidden: string, access: "read" | "write") =>
  expect.objectContaining({
    code: "HIDDEN_PATH",
    message: expect.stringContaining(`refusing to ${access} `),
    details: expect.objectContaining({ path: hidden }),
  });

describe("the file tools refuse what the read policy hides", () => {
  it.each<SandboxMode>(["read-only", "workspace-write"])(
    "%s: a home that is the workspace keeps its credential stores from readFile and writeFile",
    async (mode) => {
      const home = await fakeHome();
      const client = await createLocalSandbox({
        root: home,
        mode,
        commandWrapper: createCommandWrapper({ credentialHomes: [home] }),
      });
      const ssh = path.join(home, ".ssh");
      await expect(client.readFile(".ssh/id_ed25519")).rejects.toEqual(hiddenPath(ssh, "read"));
      await expect(client.readFile(path.join(home, ".npmrc"))).rejects.toEqual(
        hiddenPath(path.join(home, ".npmrc"), "read"),
      );
      await expect(client.readFile(".npmrc")).rejects.toThrow(
        `--allow-read ${path.join(home, ".npmrc")} (allowReads)`,
      );
      expect(await client.readFile("notes.txt")).toBe("mine\n");
      if (mode === "workspace-write") {
        await expect(client.writeFile(".npmrc", "x")).rejects.toEqual(
          hiddenPath(path.join(home, ".npmrc"), "write"),
        );
        await expect(client.writeFile(".ssh/authorized_keys", "x")).rejects.toEqual(
          hiddenPath(ssh, "write"),
        );
        expect(await readFile(path.join(home, ".npmrc"), "utf8")).toContain("SECRET");
      }
    },
  );

  it("names both rules for a path that is protected too (.ssh of the home that is the workspace)", async () => {
    const home = await fakeHome();
    const client = await createLocalSandbox({
      root: home,
      commandWrapper: createCommandWrapper({
        credentialHomes: [home],
        hostEnvironment: { ...process.env, HOME: home },
      }),
    });
    const refused = client.readFile(".ssh/id_ed25519");
    await expect(refused).rejects.toMatchObject({
      code: "PROTECTED_PATH",
      details: { rule: expect.stringContaining(".ssh of a home folder is protected") },
    });
    await expect(refused).rejects.toThrow(`--allow-read ${path.join(home, ".ssh")} (allowReads)`);
  });

  it("refuses a hideReads file inside the workspace, also through a symbolic link to it or its folder", async () => {
    const root = await useTempDir();
    await mkdir(path.join(root, "config"));
    const secret = path.join(root, "config/secrets.env");
    await writeFile(secret, "TOKEN=SECRET\n");
    await symlink("config/secrets.env", path.join(root, "link.env"));
    await symlink("config", path.join(root, "settings"));
    const client = await createLocalSandbox({ root, hideReads: [secret] });
    for (const name of ["config/secrets.env", "link.env", "settings/secrets.env"]) {
      await expect(client.readFile(name), name).rejects.toEqual(hiddenPath(secret, "read"));
      await expect(client.writeFile(name, "TOKEN=mine\n"), name).rejects.toEqual(
        hiddenPath(secret, "write"),
      );
    }
    expect(await readFile(secret, "utf8")).toBe("TOKEN=SECRET\n");
    // What lies beside it is not hidden.
    await client.writeFile("settings/other.env", "A=1\n");
    expect(await client.readFile("config/other.env")).toBe("A=1\n");
  });

  it("refuses another name (a hard link) of a hidden file, and not a file that merely has two names", async () => {
    const root = await useTempDir();
    const secret = path.join(root, "secrets.env");
    await writeFile(secret, "TOKEN=SECRET\n");
    await link(secret, path.join(root, "notes.txt"));
    await writeFile(path.join(root, "a.txt"), "plain\n");
    await link(path.join(root, "a.txt"), path.join(root, "b.txt"));
    const client = await createLocalSandbox({ root, hideReads: [secret] });
    await expect(client.readFile("notes.txt")).rejects.toEqual(hiddenPath(secret, "read"));
    expect(await client.readFile("b.txt")).toBe("plain\n");
  });

  it("refuses a hard link in the workspace to a hidden file outside it, and writes a new file over it", async () => {
    const root = await useTempDir();
    const secret = path.join(await useTempDir(), "secrets.env");
    await writeFile(secret, "TOKEN=SECRET\n");
    await link(secret, path.join(root, "notes.txt"));
    const client = await createLocalSandbox({ root, hideReads: [secret] });
    await expect(client.readFile("notes.txt")).rejects.toEqual(hiddenPath(secret, "read"));
    // A write replaces the name with a file of its own: the hidden file is left as it was.
    await client.writeFile("notes.txt", "mine\n");
    expect(await client.readFile("notes.txt")).toBe("mine\n");
    expect(await readFile(secret, "utf8")).toBe("TOKEN=SECRET\n");
  });

  it("gives it back with allowReads, and hides nothing in danger-full-access", async () => {
    const root = await useTempDir();
    const secret = path.join(root, "secrets.env");
    await writeFile(secret, "TOKEN=SECRET\n");
    const allowed = await createLocalSandbox({ root, hideReads: [secret], allowReads: [secret] });
    expect(await allowed.readFile("secrets.env")).toBe("TOKEN=SECRET\n");
    await allowed.writeFile("secrets.env", "TOKEN=new\n");
    const unconfined = await createLocalSandbox({
      root,
      mode: "danger-full-access",
      hideReads: [secret],
    });
    expect(await unconfined.readFile("secrets.env")).toBe("TOKEN=new\n");
  });
});
