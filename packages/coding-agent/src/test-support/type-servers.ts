import { existsSync } from "node:fs";
import path from "node:path";
import { createLocalSandbox } from "@pleach/sandbox";
import type { TypeServerPaths } from "../tools/type-diagnostics/servers.js";

/**
 * The language servers the CLI installs as optional dependencies, from the monorepo's
 * `node_modules`: their entry points and the folders a sandbox must let commands read. `undefined`
 * when they are not installed (an install that left optional dependencies out).
 */
export function monorepoTypeServers():
  | { servers: TypeServerPaths; readFolders: string[] }
  | undefined {
  const modules = path.resolve(import.meta.dirname, "../../../../node_modules");
  const folders = ["typescript-language-server", "typescript", "pyright"].map((name) =>
    path.join(modules, name),
  );
  const servers = {
    typescriptLanguageServer: path.join(modules, "typescript-language-server/lib/cli.mjs"),
    tsserver: path.join(modules, "typescript/lib/tsserver.js"),
    pyright: path.join(modules, "pyright/langserver.index.js"),
  };
  if (!Object.values(servers).every((entry) => existsSync(entry))) return undefined;
  return { servers, readFolders: folders };
}

/**
 * Why tests of the type check with real servers cannot run here (no session sandbox, or the
 * servers not installed), or `undefined` when they can.
 */
export async function typeCheckSkipReason(): Promise<string | undefined> {
  const probe = await createLocalSandbox({ root: process.cwd(), session: true });
  const sessions = probe.jobs !== undefined && probe.backend === "bubblewrap";
  await probe.close();
  if (!sessions) return "no session sandbox here; needs bubblewrap and /usr/bin/perl";
  if (monorepoTypeServers() === undefined) {
    return "the CLI's optional dependencies (typescript-language-server, typescript, pyright) are not installed";
  }
  return undefined;
}
