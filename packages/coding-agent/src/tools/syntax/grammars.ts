import { createRequire } from "node:module";
import path from "node:path";
import Parser from "web-tree-sitter";

/** The languages whose files the edit tools check for syntax errors. */
export type SyntaxLanguage =
  | "javascript"
  | "typescript"
  | "tsx"
  | "json"
  | "python"
  | "go"
  | "rust"
  | "css"
  | "html"
  | "yaml";

/** File extensions (lower case) and the grammar that parses them; JSX is in the JavaScript grammar. */
const LANGUAGE_BY_EXTENSION: Readonly<Record<string, SyntaxLanguage>> = {
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascript",
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "tsx",
  ".json": "json",
  ".py": "python",
  ".go": "go",
  ".rs": "rust",
  ".css": "css",
  ".html": "html",
  ".htm": "html",
  ".yaml": "yaml",
  ".yml": "yaml",
};

/** The language of a file, by its extension; `undefined` for a file no grammar here parses. */
export function syntaxLanguageOf(filePath: string): SyntaxLanguage | undefined {
  return LANGUAGE_BY_EXTENSION[path.extname(filePath).toLowerCase()];
}

/** How long one parse may take before the file is passed over, in microseconds. */
const PARSE_TIMEOUT_MICROS = 2_000_000;

let runtime: Promise<void> | undefined;
const parsers = new Map<SyntaxLanguage, Promise<Parser | undefined>>();

/**
 * The parser of `language`, its grammar loaded (from `tree-sitter-wasms`' WebAssembly build) on the
 * first call for it and kept for the life of the process; parsing is synchronous, so one parser
 * serves every call. `undefined` when the runtime or the grammar cannot load: the file is then
 * not checked, which must never fail the edit that asked.
 */
export function parserFor(language: SyntaxLanguage): Promise<Parser | undefined> {
  let loading = parsers.get(language);
  if (loading === undefined) {
    loading = loadParser(language);
    parsers.set(language, loading);
  }
  return loading;
}

async function loadParser(language: SyntaxLanguage): Promise<Parser | undefined> {
  try {
    runtime ??= Parser.init();
    await runtime;
    const require = createRequire(import.meta.url);
    const grammars = path.join(
      path.dirname(require.resolve("tree-sitter-wasms/package.json")),
      "out",
    );
    const grammar = await Parser.Language.load(path.join(grammars, `tree-sitter-${language}.wasm`));
    const parser = new Parser();
    parser.setLanguage(grammar);
    parser.setTimeoutMicros(PARSE_TIMEOUT_MICROS);
    return parser;
  } catch {
    return undefined;
  }
}
