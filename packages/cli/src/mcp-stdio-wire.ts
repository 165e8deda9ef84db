import {
  isJSONRPCRequest,
  type JSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  ProtocolErrorCode,
  type Transport,
} from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

/**
 * The stdio wire `pleach mcp` serves on: the SDK's {@link StdioServerTransport}, with one answer
 * of its own. `server/discover` exists only in MCP 2026-07-28, whose requests carry the
 * per-request `_meta` envelope; the SDK's stdio entry hands a request without the envelope's
 * protocol version to the 2025 server, which has no such method and answers -32601 (method not
 * found). Such a request is a 2026-07-28 request with its envelope missing, which that revision
 * (and the SDK's HTTP entry) answers with -32602 (invalid params): this wire answers it so, and
 * passes every other message through.
 */
export class PleachStdioWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];

  constructor(private readonly inner: Transport = new StdioServerTransport()) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      const refusal = missingEnvelope(message);
      if (refusal === undefined) return this.onmessage?.(message, extra);
      void this.inner.send(refusal).catch((error: unknown) => this.onerror?.(error as Error));
    };
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(...args: Parameters<Transport["send"]>): Promise<void> {
    return this.inner.send(...args);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
}

/** The -32602 answer to a `server/discover` without the envelope's protocol version, or none. */
function missingEnvelope(message: JSONRPCMessage): JSONRPCMessage | undefined {
  if (!isJSONRPCRequest(message) || message.method !== "server/discover") return undefined;
  const meta = message.params?._meta;
  if (typeof meta === "object" && meta !== null && PROTOCOL_VERSION_META_KEY in meta) {
    return undefined;
  }
  const where =
    meta === undefined
      ? "params._meta is missing"
      : `params._meta has no ${PROTOCOL_VERSION_META_KEY}`;
  return {
    jsonrpc: "2.0",
    id: message.id,
    error: {
      code: ProtocolErrorCode.InvalidParams,
      message: `Invalid _meta envelope: ${where}; server/discover is a request of protocol revision 2026-07-28, which carries ${PROTOCOL_VERSION_META_KEY} (and the rest of its per-request envelope) in params._meta`,
    },
  };
}
