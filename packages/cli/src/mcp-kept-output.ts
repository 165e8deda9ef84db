import type { CallToolResult, ResourceLink, Server } from "@modelcontextprotocol/server";
import { ResourceNotFoundError } from "@modelcontextprotocol/server";

/**
 * Reads a kept full output (its path as the sandbox names it, `/run/pleach-output/NAME`) as one
 * bounded page of text, the way read_file shows it to a model.
 */
export type KeptOutputReader = (path: string, abortSignal: AbortSignal) => Promise<string>;

/** The folder where the sandbox keeps whole outputs: inside the sandbox, outside the workspace. */
const KEPT_FOLDER = "/run/pleach-output/";

/** The URI of a kept output: `pleach://output/NAME` for `/run/pleach-output/NAME`. */
const URI_PREFIX = "pleach://output/";

/** A kept output's file name: one plain name, never a path or a dot file. */
const KEPT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** How many linked outputs `resources/list` remembers, newest first. */
const LISTED = 100;

/**
 * Kept full outputs as MCP resources: a result whose output was kept whole gets a
 * `resource_link` to it beside its text (the text stays the rendering every face shows, note
 * included), and `resources/read` of the link answers with the page `read` gives, so a client
 * that follows links gets a bounded read, not megabytes. Only plain names under
 * `/run/pleach-output/` are ever read; anything else is not found.
 */
export function createKeptOutputResources(read: KeptOutputReader): {
  /** Answer `resources/list`, `resources/templates/list` and `resources/read` on `server`. */
  handle(server: Server, abortSignal: () => AbortSignal | undefined): void;
  /** Add a link to `result` when the tool's `output` says where it was kept and the text names it. */
  link(result: CallToolResult, output: unknown): void;
} {
  const linked = new Map<string, ResourceLink>();
  return {
    handle(server, abortSignal) {
      server.setRequestHandler("resources/list", () => ({
        resources: [...linked.values()].reverse(),
      }));
      server.setRequestHandler("resources/templates/list", () => ({ resourceTemplates: [] }));
      server.setRequestHandler("resources/read", async (request, ctx) => {
        const { uri } = request.params;
        const name = uri.startsWith(URI_PREFIX) ? uri.slice(URI_PREFIX.length) : "";
        if (!KEPT_NAME.test(name)) {
          throw new ResourceNotFoundError(uri, `no such resource: ${uri}`);
        }
        const outer = abortSignal();
        const signal = AbortSignal.any([ctx.mcpReq.signal, ...(outer ? [outer] : [])]);
        let text: string;
        try {
          text = await read(`${KEPT_FOLDER}${name}`, signal);
        } catch (error) {
          if ((error as { code?: unknown }).code === "NOT_FOUND") {
            throw new ResourceNotFoundError(uri, `no such resource: ${uri}`);
          }
          throw error;
        }
        return { contents: [{ uri, mimeType: "text/plain", text }] };
      });
    },
    link(result, output) {
      const kept = keptOutputOf(output);
      const [block] = result.content;
      if (result.isError || kept === undefined || block?.type !== "text") return;
      if (!block.text.includes(kept.path)) return;
      const name = kept.path.slice(KEPT_FOLDER.length);
      const link: ResourceLink = {
        type: "resource_link",
        uri: `${URI_PREFIX}${name}`,
        name,
        description: `The whole output of the command (${kept.bytes.toLocaleString("en-US")} bytes kept), read one bounded page at a time.`,
        mimeType: "text/plain",
        size: kept.bytes,
      };
      result.content.push(link);
      linked.delete(link.uri);
      linked.set(link.uri, link);
      if (linked.size > LISTED) linked.delete(linked.keys().next().value as string);
    },
  };
}

/** The `fullOutput` a command-running tool's output carries, when it names a plain kept file. */
function keptOutputOf(output: unknown): { path: string; bytes: number } | undefined {
  if (typeof output !== "object" || output === null) return undefined;
  const kept = (output as { fullOutput?: unknown }).fullOutput;
  if (typeof kept !== "object" || kept === null) return undefined;
  const { path, bytes } = kept as { path?: unknown; bytes?: unknown };
  if (typeof path !== "string" || typeof bytes !== "number") return undefined;
  if (!path.startsWith(KEPT_FOLDER) || !KEPT_NAME.test(path.slice(KEPT_FOLDER.length))) {
    return undefined;
  }
  return { path, bytes };
}
