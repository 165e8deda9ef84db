import { readFileSync } from "node:fs";

/**
 * The text of a Perl program shipped with this package (`os/session-server.pl`, ...), given by its
 * path under `src/` (several paths make one program, in order: a shared part first). The `.pl`
 * files stay in `src/` (the package publishes them there): this module
 * sits one folder below the package's root both as `src/perl-program.ts` and as
 * `dist/perl-program.js`, so one relative URL finds them from either. They belong to the package's
 * own install, as trusted as its code; each is read once, when first run.
 */
export function perlProgram(...relativePaths: string[]): () => string {
  let text: string | undefined;
  return () => {
    text ??= relativePaths
      .map((relativePath) =>
        readFileSync(new URL(`../src/${relativePath}`, import.meta.url), "utf8"),
      )
      .join("\n");
    return text;
  };
}
