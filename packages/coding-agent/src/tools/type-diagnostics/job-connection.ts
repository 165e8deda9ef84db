import { Buffer } from "node:buffer";
import { PassThrough, Writable } from "node:stream";
import {
  createProtocolConnection,
  type ProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver-protocol/node";
import type { JobInfo, SandboxJobs } from "../../sandbox/index.js";

/** The most bytes one `jobs.input` call carries here: well under what a call may write (1 MiB). */
const INPUT_CHUNK_BYTES = 256 * 1024;
/** How long one read of the job's output waits for more, in milliseconds. */
const READ_WAIT_MS = 30_000;

/** An LSP connection over a job's stdin and stdout, and how it ends. */
export interface JobConnection {
  connection: ProtocolConnection;
  /** Settles when the job's output has ended (the job exited) or the connection was closed. */
  ended: Promise<JobInfo | undefined>;
  /** Stop reading the job's output (the job itself is left to the caller). */
  close(): void;
}

/**
 * Speak LSP with a job of the session sandbox: its output, read by cursor with `jobs.output`, is
 * the server's stdout (the job's command sends its stderr elsewhere, as the two are one stream);
 * what the connection writes goes to its stdin with `jobs.input`. Framing and JSON-RPC are
 * vscode-jsonrpc's.
 */
export function connectToJob(jobs: SandboxJobs, jobId: string): JobConnection {
  const stop = new AbortController();
  const incoming = new PassThrough();
  const ended = pump({ jobs, jobId, incoming, signal: stop.signal }).finally(() => incoming.end());
  // A write waits for the job to take it: the connection's messages reach the job in order.
  const outgoing = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writeInChunks(jobs, jobId, chunk).then(() => done(), done);
    },
  });
  const connection = createProtocolConnection(
    new StreamMessageReader(incoming),
    new StreamMessageWriter(outgoing),
  );
  // A failed write (the job ended) is seen as the connection's error and the requests' failure.
  outgoing.on("error", () => {});
  connection.listen();
  return {
    connection,
    ended,
    close() {
      stop.abort();
      connection.dispose();
      outgoing.destroy();
    },
  };
}

async function pump({
  jobs,
  jobId,
  incoming,
  signal,
}: {
  jobs: SandboxJobs;
  jobId: string;
  incoming: PassThrough;
  signal: AbortSignal;
}): Promise<JobInfo | undefined> {
  let since = 0;
  while (!signal.aborted) {
    let read: Awaited<ReturnType<SandboxJobs["output"]>>;
    try {
      read = await jobs.output(jobId, {
        since,
        waitMs: READ_WAIT_MS,
        maxBytes: 1024 * 1024,
        abortSignal: signal,
      });
    } catch {
      return undefined;
    }
    // Output dropped for the bound kept per job would leave the framing unreadable.
    if (read.skippedBytes > 0) return read.job;
    if (read.output !== "") incoming.write(Buffer.from(read.output, "utf8"));
    since = read.next;
    if (read.job.state !== "running" && read.next >= read.job.outputBytes) return read.job;
  }
  return undefined;
}

/** Write `bytes` to the job's stdin in pieces that each end on a whole UTF-8 character. */
async function writeInChunks(jobs: SandboxJobs, jobId: string, bytes: Buffer): Promise<void> {
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(bytes.length, start + INPUT_CHUNK_BYTES);
    // Back off a continuation byte (10xxxxxx) so no character is cut in two.
    while (end < bytes.length && end > start && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
    await jobs.input(jobId, bytes.subarray(start, end).toString("utf8"));
    start = end;
  }
}
