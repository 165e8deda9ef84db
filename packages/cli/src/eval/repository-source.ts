import { stat } from "node:fs/promises";
import path from "node:path";

/** SWE-bench's `owner/name`. */
const GITHUB_NAME = /^[\w-][\w.-]*\/[\w.-]+$/;
/** `https://...`, `ssh://...`, `file://...`, and scp's `git@host:owner/name`. */
const GIT_URL = /^(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/|[^/\s]+@[^/\s]+:)/;

async function isFolder(candidate: string): Promise<boolean> {
  try {
    return (await stat(candidate)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Where to clone an instance's `repo` from. A git URL is taken as it is. `owner/name` is GitHub
 * (`https://github.com/owner/name.git`) unless a folder of that path exists under `cwd`: then,
 * like every other path (`./a/b`, `a/b/c`, `../a`, `/abs`), it is a local repository, resolved
 * from `cwd` to an absolute path.
 */
export async function repositorySource(repo: string, cwd: string): Promise<string> {
  if (GIT_URL.test(repo)) return repo;
  const local = path.resolve(cwd, repo);
  if (GITHUB_NAME.test(repo) && !(await isFolder(local))) return `https://github.com/${repo}.git`;
  return local;
}
