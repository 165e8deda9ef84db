import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  CancellationTokenSource,
  ConfigurationRequest,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentDiagnosticRequest,
  ExecuteCommandRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  RegistrationRequest,
  ShutdownRequest,
  WorkDoneProgressCreateRequest,
} from "vscode-languageserver-protocol/node";
import type { SandboxClient, SandboxJobs } from "../../sandbox/index.js";
import { shellQuote } from "../shared/shell-quote.js";
import { connectToJob, type JobConnection } from "./job-connection.js";
import type { TypeServerPaths, TypeServerSpec } from "./servers.js";

/** One type error a server reported in a file. */
export interface TypeDiagnostic {
  /** 1-based line. */
  line: number;
  message: string;
  /** The checker's code for it: `TS2322`, `reportAttributeAccessIssue`. */
  code?: string;
}

/** A server that cannot check, and why, in words for the model. */
export class TypeServerUnavailable extends Error {
  /** Set when it did not answer in time: what it was doing then. */
  readonly timedOut: "starting" | "checking" | undefined;

  constructor(message: string, timedOut?: "starting" | "checking") {
    super(message);
    this.timedOut = timedOut;
  }
}

/** Documents kept open in one server; past it the least recently checked is closed. */
const MAX_OPEN_DOCUMENTS = 32;

interface OpenDocument {
  uri: string;
  version: number;
  text: string;
  /** The server's last full diagnostic report of it, to be told "unchanged" next time. */
  report?: { resultId: string; diagnostics: TypeDiagnostic[] };
}

/**
 * A language server running as a job of the session sandbox, spoken to over LSP: files are given
 * to it as open documents with the text the tool wrote, and their errors asked for, one request
 * at a time, each bounded by the caller's signal.
 */
export class LanguageServer {
  readonly spec: TypeServerSpec;
  readonly #jobs: SandboxJobs;
  readonly #jobId: string;
  readonly #link: JobConnection;
  readonly #root: string;
  /** Settles once `initialize` has been answered (or failed). */
  readonly #initialized: Promise<void>;
  readonly #documents = new Map<string, OpenDocument>();
  #queue: Promise<unknown> = Promise.resolve();
  #exited: string | undefined;
  /** Rejects once the server's job has ended: what waits on it stops waiting. */
  readonly #gone: Promise<never>;
  #ready = false;

  private constructor(
    spec: TypeServerSpec,
    jobs: SandboxJobs,
    jobId: string,
    root: string,
    paths: TypeServerPaths,
  ) {
    this.spec = spec;
    this.#jobs = jobs;
    this.#jobId = jobId;
    this.#root = root;
    this.#link = connectToJob(jobs, jobId);
    const { connection } = this.#link;
    // Servers ask for settings and register capabilities and progress; none changes what is
    // checked. Other requests get "method not found", notifications (logs, pushed diagnostics)
    // are dropped.
    connection.onRequest(ConfigurationRequest.type, ({ items }) => items.map(() => null));
    connection.onRequest(RegistrationRequest.type, () => {});
    connection.onRequest(WorkDoneProgressCreateRequest.type, () => {});
    this.#gone = this.#link.ended.then((job) => {
      this.#exited =
        job === undefined || job.state === "running"
          ? "stopped"
          : `exited (${job.exitCode === null ? `signal ${job.signal ?? "?"}` : `exit code ${job.exitCode}`})`;
      throw this.#exitedError();
    });
    this.#gone.catch(() => {});
    const rootUri = pathToFileURL(root).href;
    this.#initialized = connection
      .sendRequest(InitializeRequest.type, {
        // The host's process id means nothing inside the sandbox, and a server that watches it
        // would stop.
        processId: null,
        rootUri,
        workspaceFolders: [{ uri: rootUri, name: path.posix.basename(root) || "workspace" }],
        capabilities: {
          textDocument: {
            synchronization: { dynamicRegistration: false },
            publishDiagnostics: {},
            diagnostic: { dynamicRegistration: false },
          },
          workspace: { workspaceFolders: true, configuration: true },
        },
        initializationOptions: spec.initializationOptions(paths),
      })
      .then(async () => {
        await connection.sendNotification(InitializedNotification.type, {});
        this.#ready = true;
      });
    // A failed start is reported by the check that waits for it.
    this.#initialized.catch(() => {});
  }

  /**
   * Find the server in the sandbox (the workspace's `node_modules` first, then `paths`) and start
   * it as a job; `initialize` is sent and answered in the background. Throws
   * {@link TypeServerUnavailable} with what to do when it is not there.
   */
  static async start({
    client,
    jobs,
    spec,
    paths,
  }: {
    client: SandboxClient;
    jobs: SandboxJobs;
    spec: TypeServerSpec;
    paths: TypeServerPaths;
  }): Promise<LanguageServer> {
    const candidates = [spec.workspaceEntry, spec.givenEntry(paths)].filter(
      (entry): entry is string => entry !== undefined,
    );
    const probe = await client.exec(
      [
        "command -v node >/dev/null 2>&1 || { echo no-node; exit 0; }",
        `for entry in ${candidates.map(shellQuote).join(" ")}; do if [ -f "$entry" ]; then printf 'entry:%s\\n' "$entry"; break; fi; done`,
        "printf 'root:%s\\n' \"$(pwd -P)\"",
      ].join("\n"),
      { timeoutMs: 15_000 },
    );
    const lines = probe.stdout.split("\n");
    const entry = lines.find((line) => line.startsWith("entry:"))?.slice("entry:".length);
    const root = lines.find((line) => line.startsWith("root:"))?.slice("root:".length);
    if (lines.includes("no-node")) {
      throw new TypeServerUnavailable(
        `the sandbox has no \`node\` on its PATH to run the ${spec.label} language server`,
      );
    }
    if (probe.exitCode !== 0 || root === undefined || root === "") {
      throw new TypeServerUnavailable(
        `looking for the ${spec.label} language server in the sandbox failed (exit ${probe.exitCode}: ${probe.stderr.trim().slice(0, 200)})`,
      );
    }
    if (entry === undefined) {
      throw new TypeServerUnavailable(
        `no ${spec.label} language server in the sandbox. To enable it, install it in the workspace (\`npm install --save-dev --save-exact ${spec.install}\`), or run \`pleach mcp --diagnostics types\` from an install of pleach with its optional dependencies`,
      );
    }
    // stdout is the protocol's; stderr would be mixed into it (a job's output is one stream).
    const job = await jobs.start(`exec node ${shellQuote(entry)} --stdio 2>/dev/null`);
    return new LanguageServer(spec, jobs, job.jobId, root, paths);
  }

  /** Whether the server has answered `initialize`: its checks then need no start. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Whether the server's job still runs; once not, a new one is started for the next check. */
  get alive(): boolean {
    return this.#exited === undefined;
  }

  /**
   * The type errors of `filePath` (as the tool named it) with `text` as its content, as the server
   * reports them. Rejects with {@link TypeServerUnavailable} when the server does not answer
   * before `signal` aborts, or has exited.
   */
  diagnose(filePath: string, text: string, signal: AbortSignal): Promise<TypeDiagnostic[]> {
    const run = this.#queue.then(() => this.#diagnose(filePath, text, signal));
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Forget `filePath` (it was deleted): closed in the server. */
  forget(filePath: string): void {
    const uri = this.#uriOf(filePath);
    if (!this.#documents.delete(uri)) return;
    void this.#link.connection
      .sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } })
      .catch(() => {});
  }

  /** Ask the server to shut down, then end its job. */
  async close(): Promise<void> {
    if (this.alive) {
      const { connection } = this.#link;
      await bounded(
        (async () => {
          await this.#initialized;
          await connection.sendRequest(ShutdownRequest.type);
          await connection.sendNotification(ExitNotification.type);
        })(),
        AbortSignal.timeout(1_000),
      ).catch(() => {});
    }
    this.#link.close();
    await this.#jobs.kill(this.#jobId).catch(() => {});
  }

  async #diagnose(filePath: string, text: string, signal: AbortSignal): Promise<TypeDiagnostic[]> {
    if (!this.alive) throw this.#exitedError();
    try {
      await bounded(Promise.race([this.#initialized, this.#gone]), signal);
    } catch (error) {
      throw signal.aborted ? this.#timeoutError("starting") : this.#failure(error);
    }
    const uri = this.#uriOf(filePath);
    const cancel = new CancellationTokenSource();
    try {
      await this.#sync(uri, filePath, text);
      return await bounded(
        Promise.race([this.#requestDiagnostics(uri, cancel), this.#gone]),
        signal,
      );
    } catch (error) {
      cancel.cancel();
      throw signal.aborted ? this.#timeoutError("checking") : this.#failure(error);
    } finally {
      cancel.dispose();
    }
  }

  /** Open the document with `text`, or change it to `text` when it was open with other text. */
  async #sync(uri: string, filePath: string, text: string): Promise<void> {
    const { connection } = this.#link;
    const open = this.#documents.get(uri);
    if (open !== undefined) {
      // Most recently checked last, for the bound on open documents.
      this.#documents.delete(uri);
      this.#documents.set(uri, open);
      if (open.text === text) return;
      open.version += 1;
      open.text = text;
      await connection.sendNotification(DidChangeTextDocumentNotification.type, {
        textDocument: { uri, version: open.version },
        contentChanges: [{ text }],
      });
      return;
    }
    for (const [oldest] of this.#documents) {
      if (this.#documents.size < MAX_OPEN_DOCUMENTS) break;
      this.#documents.delete(oldest);
      await connection.sendNotification(DidCloseTextDocumentNotification.type, {
        textDocument: { uri: oldest },
      });
    }
    this.#documents.set(uri, { uri, version: 1, text });
    const extension = path.posix.extname(filePath).toLowerCase();
    await connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: {
        uri,
        languageId: this.spec.languages[extension] ?? "plaintext",
        version: 1,
        text,
      },
    });
  }

  async #requestDiagnostics(
    uri: string,
    cancel: CancellationTokenSource,
  ): Promise<TypeDiagnostic[]> {
    const { connection } = this.#link;
    if (this.spec.name === "typescript") {
      // typescript-language-server only pushes diagnostics, debounced and kind by kind, with no
      // word of when they are complete; tsserver's own synchronous requests answer for the text
      // as it is now.
      const found: TypeDiagnostic[] = [];
      for (const command of ["syntacticDiagnosticsSync", "semanticDiagnosticsSync"]) {
        const response = (await connection.sendRequest(
          ExecuteCommandRequest.type,
          { command: "typescript.tsserverRequest", arguments: [command, { file: uri }] },
          cancel.token,
        )) as TsserverResponse | null;
        for (const item of response?.body ?? []) {
          if (item.category !== "error") continue;
          found.push({
            line: item.start.line,
            message: item.text,
            ...(item.code === undefined ? {} : { code: `TS${item.code}` }),
          });
        }
      }
      return found;
    }
    // A server that has checked nothing since its last report says so instead of checking again.
    const document = this.#documents.get(uri);
    const previous = document?.report;
    const report = await connection.sendRequest(
      DocumentDiagnosticRequest.type,
      {
        textDocument: { uri },
        ...(previous === undefined ? {} : { previousResultId: previous.resultId }),
      },
      cancel.token,
    );
    if (report.kind === "unchanged") return previous?.diagnostics ?? [];
    const diagnostics = report.items
      .filter((item) => item.severity === 1)
      .map((item) => ({
        line: item.range.start.line + 1,
        message: typeof item.message === "string" ? item.message : item.message.value,
        ...(item.code === undefined ? {} : { code: String(item.code) }),
      }));
    if (document !== undefined) {
      if (report.resultId === undefined) delete document.report;
      else document.report = { resultId: report.resultId, diagnostics };
    }
    return diagnostics;
  }

  #uriOf(filePath: string): string {
    const absolute = path.posix.isAbsolute(filePath)
      ? path.posix.normalize(filePath)
      : path.posix.join(this.#root, filePath);
    return pathToFileURL(absolute).href;
  }

  #exitedError(): TypeServerUnavailable {
    return new TypeServerUnavailable(
      `the ${this.spec.label} language server ${this.#exited ?? "stopped"}; the next change starts it again`,
    );
  }

  #timeoutError(doing: "starting" | "checking"): TypeServerUnavailable {
    return new TypeServerUnavailable(
      `the ${this.spec.label} language server did not answer in time (while ${doing}); the next change is checked again`,
      doing,
    );
  }

  #failure(error: unknown): TypeServerUnavailable {
    if (!this.alive) return this.#exitedError();
    const message = error instanceof Error ? error.message : String(error);
    return new TypeServerUnavailable(
      `the ${this.spec.label} language server failed: ${message.slice(0, 300)}`,
    );
  }
}

/** What tsserver answers a `*DiagnosticsSync` request with. */
interface TsserverResponse {
  body?: {
    start: { line: number; offset: number };
    text: string;
    code?: number;
    category: string;
  }[];
}

/** `promise`, or a rejection once `signal` aborts (then `promise`'s own end is ignored). */
function bounded<Value>(promise: Promise<Value>, signal: AbortSignal): Promise<Value> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<Value>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
