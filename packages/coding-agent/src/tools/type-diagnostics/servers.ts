import path from "node:path";

/** The language servers the type check runs, one per language. */
export type TypeServerName = "typescript" | "pyright";

/**
 * Where the language servers are, as the sandbox's commands see them (absolute, or relative to
 * the workspace root), tried after the workspace's own `node_modules`. `pleach mcp --diagnostics
 * types` fills it from pleach's optional dependencies and makes their folders readable.
 */
export interface TypeServerPaths {
  /** `lib/cli.mjs` of the `typescript-language-server` package. */
  typescriptLanguageServer?: string;
  /** `lib/tsserver.js` of the `typescript` package, used when the workspace has no `typescript`. */
  tsserver?: string;
  /** `langserver.index.js` of the `pyright` package. */
  pyright?: string;
}

/** One language server: which files it checks and how it is found and started. */
export interface TypeServerSpec {
  name: TypeServerName;
  /** What the model reads: "TypeScript", "pyright". */
  label: string;
  /** The file extensions it checks, with their LSP language ids. */
  languages: Readonly<Record<string, string>>;
  /** Its entry point in the workspace, relative to the root. */
  workspaceEntry: string;
  /** Its entry point given in {@link TypeServerPaths}, if any. */
  givenEntry(paths: TypeServerPaths): string | undefined;
  /** The packages to install for it, pinned, as the "how to enable it" hint names them. */
  install: string;
  /** The `initializationOptions` of its `initialize` request. */
  initializationOptions(paths: TypeServerPaths): Record<string, unknown>;
}

/** The versions pleach is tested with (and installs as optional dependencies of `pleach`). */
export const TYPE_SERVER_VERSIONS = {
  "typescript-language-server": "5.3.0",
  typescript: "5.9.3",
  pyright: "1.1.414",
} as const;

const TYPESCRIPT: TypeServerSpec = {
  name: "typescript",
  label: "TypeScript",
  languages: {
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
  },
  workspaceEntry: "node_modules/typescript-language-server/lib/cli.mjs",
  givenEntry: (paths) => paths.typescriptLanguageServer,
  install: `typescript-language-server@${TYPE_SERVER_VERSIONS["typescript-language-server"]} typescript@${TYPE_SERVER_VERSIONS.typescript}`,
  // No typings download (the sandbox has no network, and it would stall the first check); the
  // workspace's own `typescript` wins over the one given, as in an editor.
  initializationOptions: (paths) => ({
    disableAutomaticTypingAcquisition: true,
    ...(paths.tsserver === undefined ? {} : { tsserver: { fallbackPath: paths.tsserver } }),
  }),
};

const PYRIGHT: TypeServerSpec = {
  name: "pyright",
  label: "pyright",
  languages: { ".py": "python", ".pyi": "python" },
  workspaceEntry: "node_modules/pyright/langserver.index.js",
  givenEntry: (paths) => paths.pyright,
  install: `pyright@${TYPE_SERVER_VERSIONS.pyright}`,
  initializationOptions: () => ({}),
};

const SERVERS: readonly TypeServerSpec[] = [TYPESCRIPT, PYRIGHT];

/** The server that checks `filePath` (by its extension), or `undefined` when none does. */
export function typeServerFor(filePath: string): TypeServerSpec | undefined {
  const extension = path.posix.extname(filePath).toLowerCase();
  return SERVERS.find((server) => Object.hasOwn(server.languages, extension));
}

/** The extensions some server checks, for the line that says a file has none. */
export function checkedExtensions(): string {
  return SERVERS.map(
    (server) => `${server.label} (${Object.keys(server.languages).join(" ")})`,
  ).join(" and ");
}
