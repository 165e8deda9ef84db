import { createRequire } from "node:module";
import path from "node:path";
import type { TypeServerPaths } from "@pleach/coding-agent/tools";

/** The language servers pleach installs as optional dependencies, where this install has them. */
export interface BundledTypeServers {
  /** Their entry points, for `createTypeDiagnostics`'s `servers`. */
  servers: TypeServerPaths;
  /** Their package folders, which the sandbox's commands must be allowed to read. */
  readFolders: string[];
}

/**
 * Find pleach's optional `typescript-language-server`, `typescript` and `pyright` beside this
 * install (a package npm could not install is left out: the check then says how to install it in
 * the workspace). A local sandbox's commands see host paths as they are, so the paths found here
 * are the ones the servers run from, once their folders are readable (`allowReads`).
 */
export function bundledTypeServers(): BundledTypeServers {
  const require = createRequire(import.meta.url);
  const folderOf = (name: string): string | undefined => {
    try {
      return path.dirname(require.resolve(`${name}/package.json`));
    } catch {
      return undefined;
    }
  };
  const servers: TypeServerPaths = {};
  const readFolders: string[] = [];
  const languageServer = folderOf("typescript-language-server");
  const typescript = folderOf("typescript");
  const pyright = folderOf("pyright");
  if (languageServer !== undefined) {
    servers.typescriptLanguageServer = path.join(languageServer, "lib", "cli.mjs");
    readFolders.push(languageServer);
  }
  if (typescript !== undefined) {
    servers.tsserver = path.join(typescript, "lib", "tsserver.js");
    readFolders.push(typescript);
  }
  if (pyright !== undefined) {
    servers.pyright = path.join(pyright, "langserver.index.js");
    readFolders.push(pyright);
  }
  return { servers, readFolders };
}
