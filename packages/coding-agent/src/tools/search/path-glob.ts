import { ToolError } from "@pleach/core";

/**
 * A glob with a `/` split into the literal folder it names and a glob for the names in it, for the
 * programs that match names only (`find -name`, `grep --include`). ripgrep matches such a glob
 * against the path below the searched folder (`src/**\/*.ts`, `**\/*.d.ts`), as a `.gitignore`
 * line would; these parts say the same for the globs that have a literal folder part.
 */
export interface PathGlob {
  /** The folder below the searched one, `""` for the searched folder itself. */
  folder: string;
  /** The glob the names must match (no `/`). */
  name: string;
  /** Whether the names may be anywhere below `folder` (`**`) or only directly in it. */
  anyDepth: boolean;
}

const GLOB_CHARACTERS = /[*?[\]{}\\!]/;

/**
 * The parts of `glob` when it holds a `/`; `undefined` for a plain name glob such as `*.ts`.
 * Refuses (`INVALID_INPUT`, naming `tool`, the `program` that would run and the way out) a path
 * glob whose folder part is a glob itself, such as `*\/test/*.ts`: only ripgrep matches those.
 */
export function splitPathGlob(glob: string, tool: string, program: string): PathGlob | undefined {
  if (!glob.includes("/")) return undefined;
  const anchored = glob.startsWith("/") ? glob.slice(1) : glob;
  const slash = anchored.lastIndexOf("/");
  const segments = slash === -1 ? [] : anchored.slice(0, slash).split("/");
  let name = anchored.slice(slash + 1);
  let anyDepth = false;
  if (name === "**") {
    name = "*";
    anyDepth = true;
  }
  if (segments[segments.length - 1] === "**") {
    segments.pop();
    anyDepth = true;
  }
  const literal = segments.every(
    (segment) =>
      segment !== "" && segment !== "." && segment !== ".." && !GLOB_CHARACTERS.test(segment),
  );
  if (name === "" || name.includes("**") || !literal) {
    throw new ToolError(
      "INVALID_INPUT",
      `${tool} cannot match the glob ${JSON.stringify(glob)} with ${program}: give a plain folder path before the name glob (\`src/**/*.ts\`, \`**/*.d.ts\`, \`src/*.ts\`), or a name glob such as \`*.ts\`.`,
    );
  }
  return { folder: segments.join("/"), name, anyDepth };
}
