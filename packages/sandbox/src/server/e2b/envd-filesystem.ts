import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { HostedSandbox } from "../sandbox-registry.js";
import {
  type EntryInfo,
  EntryInfoSchema,
  type Filesystem,
  FileType,
} from "./gen/filesystem/filesystem_pb.js";
import { notSupported, toConnectError } from "./rpc-errors.js";

/** One entry as `find -printf` prints it: fields apart by NUL, each entry ending in a NUL too. */
const ENTRY_FORMAT = String.raw`%y\0%s\0%m\0%u\0%g\0%T@\0%l\0%p\0`;
const FIELDS = 8;

/**
 * The scripts of the filesystem calls. Each runs as a command of the sandbox, so it sees and
 * changes exactly what a command may (the same mounts, protection and mode): the paths come in
 * environment variables, never in the script's text. Exit 44 means "no such path", 45 "not a
 * folder", 46 "already there".
 */
const SCRIPTS = {
  stat: `[ -e "$E2B_PATH" ] || [ -L "$E2B_PATH" ] || exit 44; find "$E2B_PATH" -maxdepth 0 -printf '${ENTRY_FORMAT}'`,
  list: `[ -d "$E2B_PATH" ] || { [ -e "$E2B_PATH" ] && exit 45; exit 44; }; find "$E2B_PATH" -mindepth 1 -maxdepth "$E2B_DEPTH" -printf '${ENTRY_FORMAT}'`,
  makeDir: `[ -e "$E2B_PATH" ] && exit 46; mkdir -p -- "$E2B_PATH" && find "$E2B_PATH" -maxdepth 0 -printf '${ENTRY_FORMAT}'`,
  move: `[ -e "$E2B_PATH" ] || [ -L "$E2B_PATH" ] || exit 44; mkdir -p -- "$(dirname -- "$E2B_TARGET")" && mv -T -- "$E2B_PATH" "$E2B_TARGET" && find "$E2B_TARGET" -maxdepth 0 -printf '${ENTRY_FORMAT}'`,
  remove: `[ -e "$E2B_PATH" ] || [ -L "$E2B_PATH" ] || exit 44; rm -rf -- "$E2B_PATH"`,
} as const;

/** The most entries one ListDir returns. */
const MAX_ENTRIES = 10_000;

/**
 * envd's filesystem service over a hosted sandbox: stat, list, make a folder, move and remove,
 * each done by a confined command of the sandbox (see {@link SCRIPTS}). Watching answers
 * `Unimplemented`.
 */
export function createFilesystemService({
  sandboxOf,
}: {
  sandboxOf(context: HandlerContext): HostedSandbox;
}): ServiceImpl<typeof Filesystem> {
  const run = async (
    context: HandlerContext,
    script: keyof typeof SCRIPTS,
    env: Record<string, string>,
  ): Promise<{ entries: EntryInfo[]; root: string }> => {
    const sandbox = sandboxOf(context);
    const root = sandbox.client.root;
    const absolute = (given: string) => path.resolve(root, given);
    const named = Object.fromEntries(
      Object.entries(env).map(([key, value]) => [
        key,
        key === "E2B_DEPTH" ? value : absolute(value),
      ]),
    );
    const result = await sandbox.client
      .exec(SCRIPTS[script], {
        env: named,
        timeoutMs: 60_000,
        maxOutputBytes: 16 * 1024 * 1024,
        abortSignal: context.signal,
      })
      .catch((error: unknown) => {
        throw toConnectError(error);
      });
    const where = named.E2B_PATH;
    if (result.exitCode === 44) throw new ConnectError(`${where} does not exist`, Code.NotFound);
    if (result.exitCode === 45)
      throw new ConnectError(`${where} is not a folder`, Code.InvalidArgument);
    if (result.exitCode === 46)
      throw new ConnectError(`${where} already exists`, Code.AlreadyExists);
    if (result.exitCode !== 0 || result.truncated) {
      const why = [result.stderr.trim(), ...(result.sandboxNotes ?? [])]
        .filter((line) => line !== "")
        .join("\n");
      const code = /permission denied|read-only/i.test(result.stderr)
        ? Code.PermissionDenied
        : Code.Internal;
      throw new ConnectError(
        `${script} of ${where} failed: ${why || `exit ${result.exitCode}`}`,
        code,
      );
    }
    return { entries: parseEntries(result.stdout), root };
  };
  const one = (entries: EntryInfo[], what: string): EntryInfo => {
    const entry = entries[0];
    if (entry === undefined) throw new ConnectError(`${what}: no entry came back`, Code.Internal);
    return entry;
  };
  return {
    async stat(request, context) {
      return {
        entry: one((await run(context, "stat", { E2B_PATH: request.path })).entries, "stat"),
      };
    },
    async listDir(request, context) {
      const depth = String(Math.max(1, Math.min(request.depth || 1, 32)));
      const { entries } = await run(context, "list", { E2B_PATH: request.path, E2B_DEPTH: depth });
      if (entries.length > MAX_ENTRIES) {
        throw new ConnectError(
          `${request.path} holds more than ${MAX_ENTRIES} entries to depth ${depth}; list a smaller folder or a lower depth`,
          Code.ResourceExhausted,
        );
      }
      return { entries };
    },
    async makeDir(request, context) {
      return {
        entry: one((await run(context, "makeDir", { E2B_PATH: request.path })).entries, "makeDir"),
      };
    },
    async move(request, context) {
      const env = { E2B_PATH: request.source, E2B_TARGET: request.destination };
      return { entry: one((await run(context, "move", env)).entries, "move") };
    },
    async remove(request, context) {
      await run(context, "remove", { E2B_PATH: request.path });
      return {};
    },
    // biome-ignore lint/correctness/useYield: it only refuses
    async *watchDir() {
      throw notSupported(
        "watching a folder (files.watchDir)",
        "list the folder again to see what changed",
      );
    },
    createWatcher() {
      throw notSupported(
        "watching a folder (files.watchDir)",
        "list the folder again to see what changed",
      );
    },
    getWatcherEvents() {
      throw notSupported(
        "watching a folder (files.watchDir)",
        "list the folder again to see what changed",
      );
    },
    removeWatcher() {
      throw notSupported(
        "watching a folder (files.watchDir)",
        "list the folder again to see what changed",
      );
    },
  };
}

const TYPES: Record<string, FileType> = {
  f: FileType.FILE,
  d: FileType.DIRECTORY,
  l: FileType.SYMLINK,
};

/** The entries `find -printf ENTRY_FORMAT` printed. */
function parseEntries(stdout: string): EntryInfo[] {
  const fields = stdout.split("\0");
  const entries: EntryInfo[] = [];
  for (let index = 0; index + FIELDS <= fields.length; index += FIELDS) {
    const [type, size, mode, owner, group, modified, target, entryPath] = fields.slice(
      index,
      index + FIELDS,
    ) as string[];
    const octal = Number.parseInt(mode as string, 8);
    entries.push(
      create(EntryInfoSchema, {
        name: path.basename(entryPath as string),
        type: TYPES[type as string] ?? FileType.UNSPECIFIED,
        path: entryPath as string,
        size: BigInt(size as string),
        mode: octal,
        permissions: permissionsOf(type as string, octal),
        owner: owner as string,
        group: group as string,
        modifiedTime: timestampFromMs(Math.round(Number(modified) * 1000)),
        ...(type === "l" ? { symlinkTarget: target as string } : {}),
      }),
    );
  }
  return entries;
}

/** `-rw-r--r--` for a file of mode 0644. */
function permissionsOf(type: string, mode: number): string {
  const bits = "rwxrwxrwx"
    .split("")
    .map((letter, index) => (mode & (1 << (8 - index)) ? letter : "-"));
  return `${type === "d" ? "d" : type === "l" ? "l" : "-"}${bits.join("")}`;
}
