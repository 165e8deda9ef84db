import { mkdir, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { writableFolders } from "./writable-folders.js";

describe("writableFolders", () => {
  const folder = () => useTempDir({ parent: os.homedir(), prefix: "pleach-writable-" });

  it("gives the real path of a folder of its own in a home", async () => {
    const root = await useTempDir();
    const given = await folder();
    const linked = path.join(given, "..", path.basename(given));
    expect(
      writableFolders({ given: [linked], root, hiddenPaths: [], hostEnvironment: process.env }),
    ).toEqual([given]);
  });

  it("refuses a folder inside a system folder's real path, where the system folder is a link (/opt -> /data/opt)", async () => {
    const root = await useTempDir();
    const data = await folder();
    await mkdir(path.join(data, "opt", "tool"), { recursive: true });
    const links = await useTempDir();
    const opt = path.join(links, "opt");
    await symlink(path.join(data, "opt"), opt);
    const given = path.join(data, "opt", "tool");
    const check = (systemFolders: string[]) =>
      writableFolders({
        given: [given],
        root,
        hiddenPaths: [],
        hostEnvironment: process.env,
        systemFolders,
      });
    expect(check([])).toEqual([given]);
    expect(() => check([opt])).toThrow(
      expect.objectContaining({
        code: "INVALID_INPUT",
        message: expect.stringContaining(
          `it lies inside ${path.join(data, "opt")} (where ${opt} leads)`,
        ),
      }),
    );
  });

  it("refuses, naming the rule, what overlaps the workspace, the system, homes, roles, hidden paths, pleach's folders or another given one", async () => {
    const root = await useTempDir();
    await mkdir(path.join(root, "sub"));
    const dotted = path.join(os.homedir(), ".config");
    await mkdir(dotted, { recursive: true });
    const onPath = await folder();
    const hidden = await folder();
    await mkdir(path.join(hidden, "store"));
    const twice = await folder();
    await mkdir(path.join(twice, "inner"));
    const cache = await folder();
    const homeHolder = await folder();
    await mkdir(path.join(homeHolder, "u"));
    const cases: [string[], string, Record<string, string | undefined>?][] = [
      [["/"], "the whole host"],
      [[path.join(root, "sub")], "inside the workspace"],
      [[path.dirname(root)], "holds the workspace"],
      [["/usr/local/lib"], "lies inside /usr"],
      [["/var"], "it is /var"],
      [[os.homedir()], "is a home folder"],
      [[homeHolder], "holds the home", { HOME: path.join(homeHolder, "u") }],
      [[dotted], "dot-entry at the top of a home"],
      [[onPath], "what the host's PATH names", { PATH: `/usr/bin:${onPath}/bin` }],
      [[path.join(hidden, "store")], "hidden by the test"],
      [[cache], "pleach's own caches", { XDG_CACHE_HOME: path.join(cache, "c") }],
      [[twice, path.join(twice, "inner")], "also given"],
      [[path.join(root, "missing")], "cannot be resolved"],
    ];
    await mkdir(path.join(onPath, "bin"));
    await mkdir(path.join(cache, "c"));
    for (const [given, why, environment] of cases) {
      expect(() =>
        writableFolders({
          given,
          root,
          hiddenPaths: [{ path: hidden, state: "folder", rule: "hidden by the test" }],
          hostEnvironment: { ...process.env, ...environment },
        }),
      ).toThrow(
        expect.objectContaining({ code: "INVALID_INPUT", message: expect.stringContaining(why) }),
      );
    }
  });
});
