import { StringDecoder } from "node:string_decoder";
import type { ExecResult } from "@pleach/core/sandbox";

/** The smallest head buffer allocated: most commands print less. */
const MIN_HEAD_CAPACITY = 16 * 1024;
/** The smallest tail ring allocated, so that small writes do not regrow it byte by byte. */
const MIN_TAIL_CAPACITY = 4096;

/**
 * Collects a stream's bytes in bounded memory: the first half of the budget as the head, the
 * last half as the tail, and a count of what fell in between. Only the bytes kept are copied, so
 * the chunk given to `push` may be a read buffer that is reused right after the call; however
 * much a command prints, memory stays near `maxBytes`. Once {@link text} has been read, the
 * stream is over: later bytes are ignored.
 */
export class BoundedOutput {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  /** The first bytes, in one buffer grown by doubling up to the head budget. */
  #head: Buffer = Buffer.alloc(0);
  #headBytes = 0;
  /** A ring of the latest bytes: grows by doubling up to the tail budget, then wraps. */
  #tail: Buffer = Buffer.alloc(0);
  /** Where the oldest byte of the tail is in the ring. */
  #tailStart = 0;
  #tailBytes = 0;
  #totalBytes = 0;
  /** The text, once read. */
  #text: string | undefined;

  constructor(maxBytes: number) {
    this.#headLimit = Math.ceil(maxBytes / 2);
    this.#tailLimit = maxBytes - this.#headLimit;
  }

  /** Bytes seen so far, kept or not. */
  get totalBytes(): number {
    return this.#totalBytes;
  }

  /** Whether some bytes were dropped. */
  get truncated(): boolean {
    return this.#totalBytes > this.#headLimit + this.#tailLimit;
  }

  /** Take in the next bytes of the stream; `chunk` is not held after the call returns. */
  push(chunk: Uint8Array): void {
    if (this.#text !== undefined) return;
    this.#totalBytes += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#headLimit) {
      const take = Math.min(rest.length, this.#headLimit - this.#headBytes);
      this.#reserveHead(this.#headBytes + take);
      this.#head.set(rest.subarray(0, take), this.#headBytes);
      this.#headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length > 0 && this.#tailLimit > 0) this.#pushTail(rest);
  }

  /** The kept text, with a marker where bytes were dropped. The stream is over once it is read. */
  text(label: string): string {
    if (this.#text !== undefined) return this.#text;
    const head = this.#head.toString("utf8", 0, this.#headBytes);
    const tail = this.#tailView().toString("utf8");
    this.#head = Buffer.alloc(0);
    this.#tail = Buffer.alloc(0);
    const dropped = this.#totalBytes - this.#headBytes - this.#tailBytes;
    this.#text =
      dropped <= 0
        ? head + tail
        : `${head}\n[... ${dropped.toLocaleString("en-US")} bytes of ${label} cut ...]\n${tail}`;
    return this.#text;
  }

  /** Make the head buffer hold at least `bytes` bytes (never more than the head budget). */
  #reserveHead(bytes: number): void {
    if (bytes <= this.#head.length) return;
    let size = Math.max(this.#head.length * 2, MIN_HEAD_CAPACITY);
    while (size < bytes) size *= 2;
    const grown = Buffer.allocUnsafe(Math.min(size, this.#headLimit));
    this.#head.copy(grown, 0, 0, this.#headBytes);
    this.#head = grown;
  }

  #pushTail(bytes: Uint8Array): void {
    const limit = this.#tailLimit;
    if (bytes.length >= limit) {
      // The chunk alone fills the tail: what the ring held is dropped.
      if (this.#tail.length < limit) this.#tail = Buffer.allocUnsafe(limit);
      this.#tail.set(bytes.subarray(bytes.length - limit));
      this.#tailStart = 0;
      this.#tailBytes = limit;
      return;
    }
    const needed = this.#tailBytes + bytes.length;
    if (needed > this.#tail.length && this.#tail.length < limit) {
      const grown = Buffer.allocUnsafe(
        Math.min(limit, Math.max(needed, this.#tail.length * 2, MIN_TAIL_CAPACITY)),
      );
      this.#tailView().copy(grown);
      this.#tail = grown;
      this.#tailStart = 0;
    }
    // Only a ring at full size wraps over its oldest bytes: a smaller one was grown to fit.
    const capacity = this.#tail.length;
    const end = (this.#tailStart + this.#tailBytes) % capacity;
    const first = Math.min(bytes.length, capacity - end);
    this.#tail.set(bytes.subarray(0, first), end);
    if (first < bytes.length) this.#tail.set(bytes.subarray(first), 0);
    const overflow = Math.max(0, needed - capacity);
    this.#tailBytes = needed - overflow;
    this.#tailStart = (this.#tailStart + overflow) % capacity;
  }

  /** The tail's bytes in order (a view of the ring when they do not wrap). */
  #tailView(): Buffer {
    const end = this.#tailStart + this.#tailBytes;
    if (end <= this.#tail.length) return this.#tail.subarray(this.#tailStart, end);
    return Buffer.concat([
      this.#tail.subarray(this.#tailStart),
      this.#tail.subarray(0, end - this.#tail.length),
    ]);
  }
}

/**
 * What a chunk of one stream goes to: the bounded result, and, when the caller streams, its
 * decoded text up to the byte budget. The chunk may be a view of a reused read buffer: both
 * consumers copy what they keep.
 */
function outputSink(
  bounded: BoundedOutput,
  stream: "stdout" | "stderr",
  budget: number,
  onOutput: ((stream: "stdout" | "stderr", text: string) => void) | undefined,
): (chunk: Buffer) => void {
  if (onOutput === undefined) return (chunk) => bounded.push(chunk);
  const decoder = new StringDecoder("utf8");
  let left = budget;
  return (chunk) => {
    bounded.push(chunk);
    if (left <= 0) return;
    const taken = chunk.length <= left ? chunk : chunk.subarray(0, left);
    left -= taken.length;
    const text = decoder.write(taken);
    if (text !== "") onOutput(stream, text);
  };
}

/**
 * A command's stdout and stderr, each kept in a {@link BoundedOutput}, with the sinks their bytes
 * are pushed to (`onOutput` sees them too), and the {@link ExecResult} they end in.
 */
export class CommandOutput {
  readonly #stdout: BoundedOutput;
  readonly #stderr: BoundedOutput;
  /** Where stdout's bytes go; the chunk may be a reused read buffer. */
  readonly onStdout: (chunk: Buffer) => void;
  /** Where stderr's bytes go; the chunk may be a reused read buffer. */
  readonly onStderr: (chunk: Buffer) => void;

  constructor(
    maxOutputBytes: number,
    onOutput: ((stream: "stdout" | "stderr", text: string) => void) | undefined,
  ) {
    this.#stdout = new BoundedOutput(maxOutputBytes);
    this.#stderr = new BoundedOutput(maxOutputBytes);
    this.onStdout = outputSink(this.#stdout, "stdout", maxOutputBytes, onOutput);
    this.onStderr = outputSink(this.#stderr, "stderr", maxOutputBytes, onOutput);
  }

  /** The result of a command that started at `started` (a `performance.now()` time). */
  result({
    exitCode,
    signal,
    started,
    timedOut,
  }: {
    exitCode: number | null;
    signal?: NodeJS.Signals | null | undefined;
    started: number;
    timedOut: boolean;
  }): ExecResult {
    const result: ExecResult = {
      exitCode,
      stdout: this.#stdout.text("stdout"),
      stderr: this.#stderr.text("stderr"),
      durationMs: Math.round(performance.now() - started),
      timedOut,
      truncated: this.#stdout.truncated || this.#stderr.truncated,
    };
    if (signal) result.signal = signal;
    return result;
  }
}
