import type { Socket } from "node:net";
import type { SpareBuffer } from "../spare-buffer.js";
import type { WireError } from "./protocol.js";

/**
 * The server's end of a file channel (see PROTOCOL.md, "File channel"): after the upgrade, the
 * connection carries file writes as frames, read off the socket straight into one buffer, past
 * Node's HTTP parser, which hands a body to JavaScript 64 KiB at a time. One frame at a time:
 *
 *   client: `PUT <sandbox id> <length> <path, percent-encoded>\n` then `length` bytes
 *   server: `<status> <length>\n` then `length` bytes (a JSON error; none for 204)
 *
 * A frame that cannot be read (a head too long or malformed, more bytes than announced, bytes
 * before the answer) closes the channel; a write that fails is answered and the channel goes on.
 */
export interface FileChannelHandlers {
  /** Largest body taken; a frame announcing more is answered 413 and the channel closed. */
  maxBodyBytes: number;
  spare: SpareBuffer;
  /** Write `body` to `filePath` of sandbox `id`, or throw what the route would answer. */
  write(id: string, filePath: string, body: Buffer): Promise<void>;
  /** The status and wire error of a thrown error, as the HTTP routes answer it. */
  answerOf(error: unknown): { status: number; wire: WireError };
  /** How long a channel may stay silent between frames before it is closed. */
  idleMs: number;
}

const MAX_HEAD_BYTES = 16 * 1024;
const HEAD = /^PUT ([a-f0-9]{32}) (\d{1,15}) (\S+)$/;

/** Serve file writes on `socket` (upgraded, `head` the bytes read past the upgrade request). */
export function serveFileChannel(
  socket: Socket,
  head: Buffer,
  handlers: FileChannelHandlers,
): void {
  const { maxBodyBytes, spare } = handlers;
  let pending: Buffer = head;
  let body: Buffer | undefined;
  let filled = 0;
  let frame: { id: string; filePath: string } | undefined;
  let busy = false;

  const close = () => socket.destroy();
  const reply = (status: number, wire?: WireError) => {
    if (refused || !socket.writable) return;
    const text = wire === undefined ? "" : JSON.stringify({ error: wire });
    socket.write(`${status} ${Buffer.byteLength(text)}\n${text}`);
  };
  let refused = false;
  const refuse = (status: number, wire: WireError) => {
    // The rest of the stream cannot be read as frames any more: answer, then close. What the
    // peer still sends is dropped for a moment, so that it reads the answer; then it is cut off.
    if (refused) return;
    refused = true;
    pending = Buffer.alloc(0);
    const text = JSON.stringify({ error: wire });
    if (socket.writable) socket.end(`${status} ${Buffer.byteLength(text)}\n${text}`);
    else close();
    setTimeout(close, 1_000).unref();
  };

  const run = async (current: { id: string; filePath: string }, bytes: Buffer) => {
    busy = true;
    try {
      await handlers.write(current.id, current.filePath, bytes);
      reply(204);
    } catch (error) {
      const { status, wire } = handlers.answerOf(error);
      reply(status, wire);
    } finally {
      spare.giveBack(bytes);
      busy = false;
    }
    if (pending.length > 0 && !refused) {
      refuse(400, protocolError("bytes came before the answer"));
    }
  };

  const consume = () => {
    while (pending.length > 0 && !refused) {
      if (busy) {
        // The client sends the next frame only after the answer: these are refused once the
        // write in progress is answered, or now if they pile up.
        if (pending.length > MAX_HEAD_BYTES)
          refuse(400, protocolError("bytes came before the answer"));
        return;
      }
      if (frame === undefined) {
        const end = pending.indexOf(0x0a);
        if (end < 0) {
          if (pending.length > MAX_HEAD_BYTES)
            refuse(400, protocolError("a frame head is too long"));
          return;
        }
        const match = HEAD.exec(pending.toString("latin1", 0, end));
        pending = pending.subarray(end + 1);
        if (match === null) {
          refuse(400, protocolError("a frame head is not `PUT <id> <length> <path>`"));
          return;
        }
        const length = Number(match[2]);
        if (length > maxBodyBytes) {
          refuse(413, {
            code: "TOO_LARGE",
            message: `the request body is larger than this server's limit of ${maxBodyBytes} bytes`,
          });
          return;
        }
        let filePath: string;
        try {
          filePath = decodeURIComponent(match[3] as string);
        } catch {
          refuse(400, protocolError("the path is not percent-encoded UTF-8"));
          return;
        }
        frame = { id: match[1] as string, filePath };
        body = spare.take(length);
        filled = 0;
      }
      const target = body as Buffer;
      const taken = Math.min(target.length - filled, pending.length);
      pending.copy(target, filled, 0, taken);
      filled += taken;
      pending = pending.subarray(taken);
      if (filled < target.length) return;
      const current = frame;
      frame = undefined;
      body = undefined;
      void run(current, target);
    }
  };

  socket.setTimeout(handlers.idleMs, close);
  socket.on("data", (chunk: Buffer) => {
    if (refused) return;
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    consume();
  });
  socket.on("error", close);
  socket.once("close", () => {
    if (body !== undefined) spare.giveBack(body);
    body = undefined;
  });
  if (pending.length > 0) consume();
}

function protocolError(message: string): WireError {
  return { code: "INVALID_INPUT", message: `file channel: ${message}; the channel is closed` };
}
