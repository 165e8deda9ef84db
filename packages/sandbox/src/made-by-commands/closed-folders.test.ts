import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  symlinkSync,
} from "node:fs";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { WorkspaceScan } from "../os/folder-walk.js";
import { reopenClosedFolders } from "./closed-folders.js";

// reopenClosedFolders with the scan of an unprivileged caller, as seen from any caller: a folder
// whose owner lacks its read or search bit cannot be listed, and nothing below it is seen. (The
// whole path, a real walk as an unprivileged user, is in red-team-allow-write.test.ts.)
function ownerScan(top: string): () => Promise<WorkspaceScan> {
  return async () => {
    const unreadable: string[] = [];
    const visit = (folder: string) => {
      if ((lstatSync(folder).mode & 0o500) !== 0o500) {
        unreadable.push(folder);
        return;
      }
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        if (entry.isDirectory()) visit(path.join(folder, entry.name));
      }
    };
    visit(top);
    return {
      gitEntries: [],
      sockets: [],
      unreadable: unreadable.sort(),
      outOfReach: [],
      directories: 0,
      truncated: false,
      listed: 0,
      tracking: "walk",
    };
  };
}

const NONE = { unreadable: [], gitEntries: [] };
/** As the look calls it: what was found when the command ended, and the scan to look again. */
const reopenAll = async (
  top: string,
  before: typeof NONE | { unreadable: string[]; gitEntries: string[] },
  scan: () => Promise<WorkspaceScan>,
) => reopenClosedFolders(top, before, await scan(), scan);
const modeOf = (folder: string) => lstatSync(folder).mode & 0o7777;
const closed: string[] = [];
afterEach(() => {
  // The deepest last closed, so opened last.
  for (const folder of closed.splice(0).reverse()) chmodSync(folder, 0o755);
});
function close(folder: string, mode = 0o000) {
  chmodSync(folder, mode);
  closed.push(folder);
}

describe.skipIf(process.platform !== "linux")("reopenClosedFolders", () => {
  it("gives its owner back a folder a command closed, and one closed below it, saying so", async () => {
    const top = await useTempDir();
    mkdirSync(path.join(top, "locked", "inner", "r"), { recursive: true });
    mkdirSync(path.join(top, "half"));
    close(path.join(top, "locked", "inner"));
    close(path.join(top, "locked"));
    close(path.join(top, "half"), 0o350);
    const notes = (await reopenAll(top, NONE, ownerScan(top))).notes;
    expect(modeOf(path.join(top, "locked"))).toBe(0o700);
    expect(modeOf(path.join(top, "locked", "inner"))).toBe(0o700);
    // Only the owner's bits: the group's and others' stay as the command left them.
    expect(modeOf(path.join(top, "half"))).toBe(0o750);
    expect(notes).toEqual([
      "half (mode 350), locked (mode 000), locked/inner (mode 000) could not be read, by a mode a sandboxed command set: pleach gave their owner read, write and search permission back when the command ended, to look for repositories made inside.",
    ]);
    expect((await reopenAll(top, NONE, ownerScan(top))).notes).toEqual([]);
  });

  it("leaves closed what was closed before the command, and what lies inside it", async () => {
    const top = await useTempDir();
    mkdirSync(path.join(top, "private", "deeper"), { recursive: true });
    close(path.join(top, "private", "deeper"));
    close(path.join(top, "private"));
    const before = [path.join(top, "private")];
    expect(
      (await reopenAll(top, { unreadable: before, gitEntries: [] }, ownerScan(top))).notes,
    ).toEqual([]);
    expect(modeOf(path.join(top, "private"))).toBe(0o000);
  });

  it.skipIf(process.getuid?.() !== 0)(
    "changes nobody else's folder (as root: only root can give a folder to another user)",
    async () => {
      const top = await useTempDir();
      mkdirSync(path.join(top, "theirs"));
      chownSync(path.join(top, "theirs"), 65_534, 65_534);
      close(path.join(top, "theirs"));
      expect((await reopenAll(top, NONE, ownerScan(top))).notes).toEqual([]);
      expect(modeOf(path.join(top, "theirs"))).toBe(0o000);
    },
  );

  it("changes no folder a link stands for by the time it is opened", async () => {
    const top = await useTempDir();
    const outside = await useTempDir();
    mkdirSync(path.join(top, "swapped"));
    mkdirSync(path.join(outside, "target"));
    close(path.join(outside, "target"));
    // The scan saw a closed folder; by the time it is opened a link to another stands there.
    const seen = ownerScan(top);
    const swap = async () => {
      const scan = await seen();
      if (lstatSync(path.join(top, "swapped")).isDirectory()) {
        renameSync(path.join(top, "swapped"), path.join(top, "swapped-away"));
        symlinkSync(path.join(outside, "target"), path.join(top, "swapped"));
        scan.unreadable.push(path.join(top, "swapped"));
      }
      return scan;
    };
    const { notes } = await reopenAll(top, NONE, swap);
    expect(modeOf(path.join(outside, "target"))).toBe(0o000);
    expect(notes).toEqual([
      expect.stringContaining(
        "swapped (path escapes the workspace: swapped) could not be read and pleach could not open it for good",
      ),
    ]);
    // Not opened, but not for want of time.
    expect(notes[0]).not.toContain("in time");
  });
});
