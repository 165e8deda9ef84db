// The client configurations docs/mcp-clients.md gives, read from its code blocks, so the
// real-client tests run each CLI with the very settings a user copies, and the docs test checks
// every block names `pleach mcp` with flags it accepts.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { launcher } from "./fixture.js";

/** docs/mcp-clients.md, from the repository's root. */
const DOC_PATH = path.resolve(import.meta.dirname, "../../../docs/mcp-clients.md");

/** A fenced code block of the doc: the `## ` section it stands in, its language and its text. */
export interface DocBlock {
  section: string;
  lang: string;
  text: string;
}

/** Every fenced code block of the doc, in order. */
export function docBlocks(doc = readFileSync(DOC_PATH, "utf8")): DocBlock[] {
  const blocks: DocBlock[] = [];
  let section = "";
  const lines = doc.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? "";
    if (line.startsWith("## ")) section = line.slice(3).trim();
    const fence = /^```(\w*)$/.exec(line);
    if (fence === null) continue;
    const body: string[] = [];
    while (++index < lines.length && lines[index] !== "```") body.push(lines[index] ?? "");
    blocks.push({ section, lang: fence[1] ?? "", text: body.join("\n") });
  }
  return blocks;
}

/** A JSON or TOML block, parsed. */
export function parseBlock(block: DocBlock): unknown {
  return block.lang === "toml" ? parseToml(block.text) : JSON.parse(block.text);
}

/** The first `lang` block of the doc's section for `client`, parsed. */
export function documentedConfig(client: string, lang: "json" | "toml"): Record<string, unknown> {
  const block = docBlocks().find(
    (candidate) => candidate.section === client && candidate.lang === lang,
  );
  if (block === undefined)
    throw new Error(`docs/mcp-clients.md has no ${lang} block for ${client}`);
  return parseBlock(block) as Record<string, unknown>;
}

/**
 * The documented workspace placeholders: a path to replace, and the variable Cursor and VS Code
 * expand to the open folder.
 */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the editors' own variable, not a template.
const WORKSPACE_PLACEHOLDERS = new Set(["/path/to/repo", "${workspaceFolder}"]);

/**
 * A documented server entry run from this checkout: `npx -y @pleach/cli` becomes this Node and
 * the built bin, a placeholder workspace becomes `root`; every other setting stays as given.
 */
export function localServer(
  server: { command: string; args: string[] },
  root: string,
): { command: string; args: string[] } {
  if (server.command !== "npx" || server.args[0] !== "-y" || server.args[1] !== "@pleach/cli") {
    throw new Error(`not the documented npx command: ${server.command} ${server.args.join(" ")}`);
  }
  return {
    command: process.execPath,
    args: [
      launcher,
      ...server.args.slice(2).map((arg) => (WORKSPACE_PLACEHOLDERS.has(arg) ? root : arg)),
    ],
  };
}
