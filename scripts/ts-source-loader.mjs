// Loads the TypeScript sources in a plain Node process or worker (a worker the tests start does
// not go through the test runner): a `.js` import that has no file resolves to the `.ts` beside
// it, and a `.ts` module is compiled on load (types stripped, nothing checked). Registered with
// `module.register()`; never used by the built packages.
import { readFile } from "node:fs/promises";
import ts from "typescript";

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    const relative = specifier.startsWith(".") || specifier.startsWith("file:");
    if (error?.code !== "ERR_MODULE_NOT_FOUND" || !relative || !specifier.endsWith(".js")) {
      throw error;
    }
    return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
  }
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return nextLoad(url, context);
  const source = await readFile(new URL(url), "utf8");
  const { outputText } = ts.transpileModule(source, {
    fileName: url,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: false,
    },
  });
  return { format: "module", source: outputText, shortCircuit: true };
}
