// The runtime folders of rebuilt sandbox images do not pile up: those unused for an hour that no
// running sandbox container mounts are removed, the others kept. No engine needed: docker's
// answers are given.

import { existsSync } from "node:fs";
import { mkdir, utimes } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { expect, it } from "vitest";
import { reapRuntimeFolders } from "./runtime-mount.js";

it("removes the runtime folders unused for an hour that no running container mounts", async () => {
  const stateFolder = await useTempDir("pleach-runtime-reap-");
  const folder = (name: string) => path.join(stateFolder, name);
  const names = {
    current: "runtime-0000000000000001",
    mounted: "runtime-0000000000000002",
    recent: "runtime-0000000000000003",
    stale: "runtime-0000000000000004",
    staleTemporary: "runtime-0000000000000005.0123456789ab.tmp",
    socketFolder: "0000000000000006",
  };
  const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
  for (const [kind, name] of Object.entries(names)) {
    await mkdir(path.join(folder(name), "opt"), { recursive: true });
    if (kind !== "recent") await utimes(folder(name), twoHoursAgo, twoHoursAgo);
  }
  const asked: string[][] = [];
  const run = async (args: string[]) => {
    asked.push(args);
    if (args[0] === "ps") return "c1\nc2";
    return `/tmp/elsewhere\n${folder(names.mounted)}\n\n/run/pleach\n`;
  };
  await reapRuntimeFolders({ run, stateFolder, keep: folder(names.current) });
  expect(asked[0]).toEqual(["ps", "--quiet", "--filter", "label=dev.pleach.sandbox=1"]);
  expect(asked[1]?.slice(-2)).toEqual(["c1", "c2"]);
  const left = Object.fromEntries(
    Object.entries(names).map(([kind, name]) => [kind, existsSync(folder(name))]),
  );
  expect(left).toEqual({
    current: true,
    mounted: true,
    recent: true,
    stale: false,
    staleTemporary: false,
    socketFolder: true,
  });
});
