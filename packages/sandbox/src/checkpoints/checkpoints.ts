import { createHash } from "node:crypto";
import { closeSync, readFileSync, readSync } from "node:fs";
import path from "node:path";
import { type SandboxMode, ToolError } from "@pleach/core";
import type { Checkpoint, RestoreResult, SandboxCheckpoints } from "@pleach/core/sandbox";
import type { WorkspaceRoot } from "../beneath.js";
import type { HiddenPaths } from "../hidden-files.js";
import type { WorkspaceProtection } from "../policy/protection.js";
import { userStateFolder } from "../user-state-folder.js";
import { writeWorkspaceFile } from "../workspace-files.js";
import { quotedPath, ShadowRepository } from "./shadow-repository.js";
import {
  type Entry,
  type Known,
  makeLink,
  openEntry,
  readEntries,
  removeEmptiedFolders,
  setExecutable,
  unlinkEntry,
} from "./workspace-entries.js";

/** The ref that holds a workspace's checkpoints, newest at its tip. */
const REF = "refs/pleach/checkpoints";
/** The most files, and bytes read, one checkpoint takes: past them it is refused, saying why. */
const MAX_FILES = 100_000;
const MAX_READ_BYTES = 2 * 1024 * 1024 * 1024;
/** How much of a changed file a take reads at a time. */
const READ_PART_BYTES = 1024 * 1024;
/** The checkpoints `list` shows. */
const LISTED = 100;

/** Options of {@link createCheckpoints}. */
export interface CheckpointsOptions {
  root: WorkspaceRoot;
  mode: SandboxMode;
  /** What is protected in the workspace now (restores leave it as it is). */
  protection: () => Promise<WorkspaceProtection>;
  /** What the read policy hides: left out of checkpoints, never restored over. */
  hidden: HiddenPaths;
  /** @default the user's private state folder (`userStateFolder("checkpoints")`) */
  storeFolder?: string;
  /** @internal The longest one git run of the store may take (tests). */
  gitTimeoutMs?: number;
}

/**
 * Checkpoints of a local workspace in a bare git repository of the user's private state folder,
 * one per workspace (see {@link ShadowRepository}). A checkpoint lists the workspace's files by
 * its `.gitignore` rules, reads each through the race-free walk (`locate`, the file opened with
 * `O_NOFOLLOW` in its held folder, so a link swapped in by a running command is stored as a
 * link, never followed out), and reads again only files whose identity, size or times changed
 * since the last one. A restore writes back through the same writer as the file tools, so
 * protected and hidden paths stay as they are.
 */
export function createCheckpoints({
  root,
  mode,
  protection,
  hidden,
  storeFolder,
  gitTimeoutMs,
}: CheckpointsOptions): SandboxCheckpoints {
  let shadow: ShadowRepository | undefined;
  const known: Known = new Map();
  let queue: Promise<unknown> = Promise.resolve();
  /** One take or restore at a time. */
  const serial = <Result>(work: () => Promise<Result>): Promise<Result> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const repository = async () => {
    if (shadow !== undefined) return shadow;
    let folder = storeFolder;
    if (folder === undefined) {
      const state = userStateFolder("checkpoints");
      if ("problem" in state) {
        throw new ToolError("UNSUPPORTED", `checkpoints need a private folder: ${state.problem}`);
      }
      folder = state.folder;
    }
    const name = createHash("sha256").update(root.real).digest("hex").slice(0, 24);
    const made = new ShadowRepository(path.join(folder, `${name}.git`), root.real, gitTimeoutMs);
    await made.init();
    shadow = made;
    return made;
  };

  const take = async (label: string): Promise<Checkpoint> => {
    const repo = await repository();
    const parent = await repo.resolve(REF);
    const hiddenPaths = hidden("workspace").map(({ path: hiddenPath }) => hiddenPath);
    // What is protected no step changes: it is left out.
    const policy = mode === "danger-full-access" ? undefined : await protection();
    const skipped: string[] = [];
    const lines: string[] = [];
    const marked = new Map<number, string>();
    let files = 0;
    let readBytes = 0;
    const { paths: listed, notUtf8 } = await repo.paths();
    for (const relative of notUtf8) skipped.push(`${relative} (its name is not UTF-8)`);
    if (listed.length + notUtf8.length > MAX_FILES) throw tooLarge(`${listed.length} files`);
    const byFolder = new Map<string, string[]>();
    for (const relative of listed) {
      if (relative.endsWith("/")) skipped.push(`${relative} (a nested git repository)`);
      else if (policy?.ruleFor(relative) === undefined) {
        const folder = path.dirname(relative);
        byFolder.set(folder, [...(byFolder.get(folder) ?? []), relative]);
      }
    }
    const createdAt = Date.now();
    const changed: string[] = [];
    const take = (relative: string, entry: Entry | undefined) => {
      if (entry === undefined) return undefined;
      if (entry.kind === "skip") skipped.push(`${relative} (${entry.reason})`);
      return entry.kind === "skip" ? undefined : entry;
    };
    for (const [folder, relatives] of byFolder) {
      let entries: Array<[string, Entry | undefined]> | undefined;
      try {
        entries = readEntries(root, folder, relatives, hiddenPaths, known);
      } catch (error) {
        // The folder became a link that leads out, say: a command changes it as we read.
        const reason = `it changed as it was read (${(error as Error).message})`;
        entries = relatives.map((relative) => [relative, { kind: "skip", reason }]);
      }
      for (const [relative, found] of entries ?? []) {
        const entry = take(relative, found);
        if (entry?.kind === "known") {
          files += 1;
          lines.push(`M ${entry.mode} ${entry.sha} ${quotedPath(relative)}`);
        } else if (entry !== undefined) changed.push(relative);
      }
    }
    // What changed is read one file at a time as fast-import takes it, so that a take holds one
    // file's bytes, not all it reads.
    async function* stream(): AsyncGenerator<Buffer> {
      for (const relative of changed) {
        let entry: Entry | undefined;
        try {
          entry = take(relative, openEntry(root, relative, hiddenPaths));
        } catch (error) {
          const reason = `it changed as it was read (${(error as Error).message})`;
          entry = take(relative, { kind: "skip", reason });
        }
        if (entry === undefined || (entry.kind !== "read" && entry.kind !== "open")) continue;
        const size = entry.kind === "read" ? entry.bytes.length : entry.size;
        readBytes += size;
        if (readBytes > MAX_READ_BYTES) {
          if (entry.kind === "open") closeSync(entry.fd);
          throw tooLarge(`over ${MAX_READ_BYTES / 1024 ** 3} GiB`);
        }
        const mark = marked.size + 1;
        yield Buffer.from(`blob\nmark :${mark}\ndata ${size}\n`);
        if (entry.kind === "read") yield entry.bytes;
        else {
          // In parts, exactly `size` bytes: a file that shrank as it was read is left out.
          let whole = true;
          try {
            for (let at = 0; at < size; ) {
              const part = Buffer.alloc(Math.min(READ_PART_BYTES, size - at));
              const got = whole ? readSync(entry.fd, part, 0, part.length, null) : 0;
              if (got < part.length) whole = false;
              at += part.length;
              yield part;
            }
          } finally {
            closeSync(entry.fd);
          }
          if (!whole) {
            yield Buffer.from("\n");
            skipped.push(`${relative} (it changed as it was read)`);
            continue;
          }
        }
        yield Buffer.from("\n");
        files += 1;
        marked.set(mark, relative);
        if (entry.key !== undefined) known.set(relative, { key: entry.key, sha: "" });
        lines.push(`M ${entry.mode} :${mark} ${quotedPath(relative)}`);
      }
      const message = `${label}\n\n${JSON.stringify({ files, skipped: skipped.slice(0, 50) })}\n`;
      const header = [
        `commit ${REF}`,
        `committer pleach <pleach@localhost> ${Math.floor(createdAt / 1000)} +0000`,
        `data ${Buffer.byteLength(message)}`,
      ].join("\n");
      yield Buffer.from(
        [
          `${header}\n${message}`,
          ...(parent === undefined ? [] : [`from ${parent}`]),
          "deleteall",
          ...lines,
          "",
        ].join("\n"),
      );
    }
    const marksFile = path.join(repo.gitDir, "pleach-marks");
    await repo.run(["fast-import", "--quiet", "--force", `--export-marks=${marksFile}`], stream());
    for (const line of readFileSync(marksFile, "utf8").split("\n")) {
      const match = /^:(\d+) ([0-9a-f]+)$/.exec(line);
      const relative = match === null ? undefined : marked.get(Number(match[1]));
      const entry = relative === undefined ? undefined : known.get(relative);
      if (entry !== undefined && match !== null) entry.sha = match[2] as string;
    }
    const id = await repo.resolve(REF);
    if (id === undefined) throw new ToolError("INTERNAL", "the checkpoint was not recorded");
    return { id, label, createdAt, files, skipped };
  };

  return {
    take(label) {
      if (typeof label !== "string" || label.includes("\0") || label.length > 200) {
        throw new ToolError(
          "INVALID_INPUT",
          "a checkpoint's label is a string of at most 200 characters",
        );
      }
      return serial(() => take(label.replace(/\n/g, " ")));
    },

    restore(checkpointId) {
      return serial(async () => {
        if (mode === "read-only") {
          throw new ToolError("READ_ONLY", "the read-only sandbox restores no checkpoint");
        }
        const repo = await repository();
        const wantedId =
          typeof checkpointId === "string" && /^[0-9a-f]{7,64}$/.test(checkpointId)
            ? await repo.resolve(checkpointId)
            : undefined;
        if (wantedId === undefined) {
          throw new ToolError(
            "NOT_FOUND",
            `no checkpoint ${JSON.stringify(checkpointId)} of this workspace; list them (checkpoints.list()) for their ids`,
          );
        }
        const before = await take(`before restore of ${wantedId.slice(0, 12)}`);
        const wanted = await repo.tree(wantedId);
        const now = await repo.tree(before.id);
        const policy = mode === "danger-full-access" ? undefined : await protection();
        const result: RestoreResult = {
          checkpoint: wantedId,
          undo: before.id,
          written: [],
          removed: [],
          skipped: [],
        };
        const refused = (relative: string) => {
          const rule = policy?.ruleFor(relative);
          if (rule !== undefined) result.skipped.push({ path: relative, reason: rule });
          return rule !== undefined;
        };
        // What was made since goes first, then the folders it emptied, then what was there.
        for (const [relative, entry] of now) {
          const kept = wanted.get(relative);
          const replaced =
            kept !== undefined && (kept.mode === "120000") !== (entry.mode === "120000");
          if ((kept === undefined || replaced) && !refused(relative)) {
            if (unlinkEntry(root, relative) && kept === undefined) result.removed.push(relative);
          }
        }
        removeEmptiedFolders(root, result.removed, wanted, refused);
        for (const [relative, entry] of wanted) {
          const current = now.get(relative);
          if (current?.sha === entry.sha && current.mode === entry.mode) continue;
          if (refused(relative)) continue;
          const bytes = await repo.blob(entry.sha);
          try {
            if (entry.mode === "120000") makeLink(root, relative, bytes.toString("utf8"));
            else {
              await writeWorkspaceFile({
                root,
                filePath: relative,
                bytes,
                mode,
                protection,
                hidden,
              });
              setExecutable(root, relative, entry.mode === "100755");
            }
            result.written.push(relative);
          } catch (error) {
            result.skipped.push({ path: relative, reason: (error as Error).message });
          }
        }
        return result;
      });
    },

    async list() {
      const repo = await repository();
      if ((await repo.resolve(REF)) === undefined) return [];
      const log = await repo.run(["log", "-z", `-n${LISTED}`, "--format=%H%n%ct%n%B", REF]);
      return log
        .toString("utf8")
        .split("\0")
        .filter((entry) => entry.trim() !== "")
        .map((entry) => {
          const [id = "", seconds = "0", label = "", , details = "{}"] = entry.split("\n");
          const parsed = JSON.parse(details) as { files?: number; skipped?: string[] };
          return {
            id,
            label,
            createdAt: Number(seconds) * 1000,
            files: parsed.files ?? 0,
            skipped: parsed.skipped ?? [],
          };
        });
    },
  };
}

/** The error of a workspace too large to checkpoint. */
function tooLarge(what: string): ToolError {
  return new ToolError(
    "TOO_LARGE",
    `the workspace's files not ignored by its .gitignore come to ${what}, past what a checkpoint takes (${MAX_FILES} files, ${MAX_READ_BYTES / 1024 ** 3} GiB); ignore build output and dependencies (node_modules/, dist/) in .gitignore`,
  );
}
