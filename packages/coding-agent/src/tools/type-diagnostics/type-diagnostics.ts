import { isToolError } from "@pleach/core";
import { type SandboxClient, sandboxJobsOf } from "../../sandbox/index.js";
import { normalizeFilePath } from "../shared/file-state.js";
import { compareDiagnostics } from "./compare.js";
import { LanguageServer, type TypeDiagnostic, TypeServerUnavailable } from "./language-server.js";
import {
  type TypeServerName,
  type TypeServerPaths,
  type TypeServerSpec,
  typeServerFor,
} from "./servers.js";

/** Files larger than this (UTF-16 units) are not given to a server. */
const MAX_CHECKED_CHARS = 1024 * 1024;
/** How many of a file's new (or fixed) errors a result lists; the count says how many there are. */
const LISTED = 5;
/** A server that exited this many times in a session is not started again in it. */
const MAX_STARTS = 3;

/** What the type check says of one file a change wrote (an entry of the `typeCheck` output). */
export interface FileTypeCheck {
  path: string;
  /** The checker that read it: "TypeScript", "pyright"; absent when none fits the file. */
  checker?: string;
  status: "checked" | "unavailable" | "no-server";
  /** With `checked`: the errors the change made (the first few) and how many. */
  introduced?: { count: number; errors: TypeDiagnostic[] };
  /** With `checked`: the errors the change removed, by their line before. */
  fixed?: { count: number; errors: TypeDiagnostic[] };
  /** With `checked`: errors there before and still there. */
  existing?: number;
  /** With `unavailable`: why, and what to do. */
  reason?: string;
}

/** Options of {@link createTypeDiagnostics}. */
export interface TypeDiagnosticsOptions {
  /** Where the language servers are in the sandbox, after the workspace's `node_modules`. @default {} */
  servers?: TypeServerPaths;
  /**
   * How long a change's check may take, in milliseconds, from the call's start; past it the
   * result says the check did not answer, and the server goes on.
   * @default 10_000
   */
  timeoutMs?: number;
  /**
   * The same bound for a change checked while its server starts (the first of a session, or
   * after the server stopped), until it has answered `initialize`: loading a project and the
   * language's library takes seconds.
   * @default 30_000
   */
  startTimeoutMs?: number;
}

/** A change being checked: begun before the tool writes, finished after. */
export interface TypeCheckRun {
  /** Give each file's text after the change to its server and compare its errors with before. */
  finish(): Promise<FileTypeCheck[]>;
}

/**
 * A session's type check: language servers kept running as jobs of its sandbox, one per
 * language, started on the first change of a file they check.
 */
export interface TypeDiagnostics {
  /** Read each file's text before a change, and ask its server for its errors meanwhile. */
  begin(paths: readonly string[]): Promise<TypeCheckRun>;
  /** Stop the servers (they also end with the session). */
  close(): Promise<void>;
}

interface PendingFile {
  path: string;
  spec: TypeServerSpec | undefined;
  before: Promise<TypeDiagnostic[]> | undefined;
  /** `null` when the file did not exist; `undefined` when it could not be read. */
  beforeText: string | null | undefined;
  /** Ends the wait for this file's check, `boundMs` after the call's start. */
  deadline: AbortSignal;
  boundMs: number;
  /** The server that checked the text before, when it was checked. */
  server?: Promise<LanguageServer>;
}

/**
 * The type check of a session over `client`, which must offer jobs (the servers run in its
 * session sandbox, confined as its commands are). Over a client without jobs each file's check
 * says it is unavailable.
 */
export function createTypeDiagnostics(
  client: SandboxClient,
  { servers: paths = {}, timeoutMs = 10_000, startTimeoutMs = 30_000 }: TypeDiagnosticsOptions = {},
): TypeDiagnostics {
  const running = new Map<TypeServerName, Promise<LanguageServer>>();
  const starts = new Map<TypeServerName, number>();
  let closed = false;

  const serverFor = async (spec: TypeServerSpec): Promise<LanguageServer> => {
    const jobs = sandboxJobsOf(client);
    if (jobs === undefined) {
      throw new TypeServerUnavailable(
        "this sandbox runs no background jobs, where the language server would run (use a client with a session)",
      );
    }
    const current = running.get(spec.name);
    const server = current === undefined ? undefined : await current.catch(() => undefined);
    if (server?.alive) return server;
    if (closed) throw new TypeServerUnavailable("the session's type check was closed");
    const count = starts.get(spec.name) ?? 0;
    if (count >= MAX_STARTS) {
      throw new TypeServerUnavailable(
        `the ${spec.label} language server stopped ${count} times in this session, and is not started again`,
      );
    }
    if (server !== undefined) starts.set(spec.name, count + 1);
    const started = LanguageServer.start({ client, jobs, spec, paths });
    running.set(spec.name, started);
    // Not found is said again on the next change, which looks again (it may have been installed).
    started.catch(() => running.delete(spec.name));
    return started;
  };

  return {
    async begin(filePaths) {
      const warm = AbortSignal.timeout(timeoutMs);
      const starting = AbortSignal.timeout(startTimeoutMs);
      const pending: PendingFile[] = [];
      for (const filePath of new Set(filePaths.map(normalizeFilePath))) {
        const spec = typeServerFor(filePath);
        if (spec === undefined) {
          pending.push({
            path: filePath,
            spec,
            before: undefined,
            beforeText: undefined,
            deadline: warm,
            boundMs: timeoutMs,
          });
          continue;
        }
        const beforeText = await readText(client, filePath);
        const server = await running.get(spec.name)?.catch(() => undefined);
        const isWarm = server?.alive === true && server.ready;
        const entry: PendingFile = {
          path: filePath,
          spec,
          before: undefined,
          beforeText,
          deadline: isWarm ? warm : starting,
          boundMs: isWarm ? timeoutMs : startTimeoutMs,
        };
        const { deadline } = entry;
        if (beforeText === null) entry.before = Promise.resolve([]);
        else if (beforeText !== undefined) {
          // The same server checks the text after: one that stops meanwhile is not restarted
          // within the call.
          entry.server = serverFor(spec);
          entry.server.catch(() => {});
          entry.before = entry.server.then((started) =>
            started.diagnose(filePath, beforeText, deadline),
          );
          // Awaited in `finish`, which a failed change never calls.
          entry.before.catch(() => {});
        }
        pending.push(entry);
      }
      return {
        finish: async () =>
          (await Promise.all(pending.map((file) => finishFile(file)))).filter(
            (check): check is FileTypeCheck => check !== undefined,
          ),
      };
    },
    async close() {
      closed = true;
      const servers = await Promise.all(
        [...running.values()].map((server) => server.catch(() => undefined)),
      );
      running.clear();
      await Promise.all(servers.map((server) => server?.close()));
    },
  };

  async function finishFile(file: PendingFile): Promise<FileTypeCheck | undefined> {
    const { path, spec, deadline } = file;
    if (spec === undefined) return { path, status: "no-server" };
    const unavailable = (reason: string): FileTypeCheck => ({
      path,
      checker: spec.label,
      status: "unavailable",
      reason,
    });
    const afterText = await readText(client, path);
    if (afterText === null) {
      // Deleted by the change: nothing to check.
      running.get(spec.name)?.then(
        (server) => server.forget(path),
        () => {},
      );
      return undefined;
    }
    if (file.before === undefined || file.beforeText === undefined || afterText === undefined) {
      return unavailable(`it could not be read as text of at most ${MAX_CHECKED_CHARS} characters`);
    }
    try {
      const server = await (file.server ?? serverFor(spec));
      const [before, after] = await Promise.all([
        file.before,
        server.diagnose(path, afterText, deadline),
      ]);
      const change = compareDiagnostics(
        { text: file.beforeText ?? "", diagnostics: before },
        { text: afterText, diagnostics: after },
      );
      return {
        path,
        checker: spec.label,
        status: "checked",
        introduced: { count: change.introduced.length, errors: change.introduced.slice(0, LISTED) },
        fixed: { count: change.fixed.length, errors: change.fixed.slice(0, LISTED) },
        existing: change.kept,
      };
    } catch (error) {
      if (error instanceof TypeServerUnavailable && error.timedOut !== undefined) {
        return unavailable(
          `the ${spec.label} language server did not answer within ${file.boundMs} ms (while ${error.timedOut}); it goes on, and the next change is checked again`,
        );
      }
      return unavailable(error instanceof Error ? error.message : String(error));
    }
  }
}

/** The text of `filePath`: `null` when it does not exist, `undefined` when it cannot be checked. */
async function readText(
  client: SandboxClient,
  filePath: string,
): Promise<string | null | undefined> {
  try {
    const text = await client.readFile(filePath, { maxBytes: MAX_CHECKED_CHARS });
    return text.length > MAX_CHECKED_CHARS ? undefined : text;
  } catch (error) {
    return isToolError(error) && error.code === "NOT_FOUND" ? null : undefined;
  }
}
