import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { userCacheFolder } from "../caches/caches.js";
import { isInside } from "../paths.js";
import { userStateRoot } from "../user-state-folder.js";
import type { HiddenPath } from "./hidden-reads.js";
import { realpathOr } from "./path-state.js";
import { ROLE_VARIABLES } from "./protected-entries.js";
import { defaultHomeFolders } from "./protection.js";
import { HOST_FOLDERS } from "./read-view.js";

/** Options of {@link writableFolders}. */
export interface WritableFoldersOptions {
  /** The folders asked for (`allowWrites`, `--allow-write`): absolute, or relative to the current folder. */
  given: readonly string[];
  /** Real path of the workspace root. */
  root: string;
  /** What commands cannot read (`hiddenReads` in the host scope). */
  hiddenPaths: readonly HiddenPath[];
  /** For the homes, the role variables and pleach's own folders. */
  hostEnvironment: Readonly<Record<string, string | undefined>>;
}

/**
 * The real paths of the folders besides the workspace that commands in `workspace-write` may
 * write (`allowWrites`), each checked at every use: an existing folder that overlaps none of what
 * the host runs or keeps apart. Refused with `INVALID_INPUT`, naming the rule: a folder that holds
 * or lies inside the workspace (commands write the workspace anyway), a system folder or the
 * sandbox's own (`/usr`, `/etc`, `/var`, `/tmp`, ...), a home or a folder holding one, the
 * dot-entries at the top of a home (what the host's programs read), a folder a host variable with
 * a role names or one holding it (`PATH`, `XDG_CONFIG_HOME`, ... see `ROLE_VARIABLES`), a hidden
 * path or one holding it, and pleach's own caches and state. Inside each folder the workspace's
 * rules hold as they do in the workspace (`workspaceProtection` with it as the root).
 */
export function writableFolders({
  given,
  root,
  hiddenPaths,
  hostEnvironment,
}: WritableFoldersOptions): string[] {
  const folders: string[] = [];
  for (const each of given) {
    const folder = existingFolder(each);
    const refused = (why: string, other?: string) =>
      new ToolError(
        "INVALID_INPUT",
        `allowWrites (--allow-write) ${each} cannot be made writable for commands: ${why}. Give a folder of its own for what the task writes (a build output, a scratch folder) outside the workspace, the homes' dot-entries and the system's folders.`,
        { details: { path: folder, ...(other === undefined ? {} : { overlaps: other }) } },
      );
    const overlap = (other: string) => isInside(other, folder) || isInside(folder, other);
    if (folder === "/") throw refused("it is the whole host");
    if (overlap(root)) {
      throw refused(
        isInside(root, folder)
          ? `it lies inside the workspace ${root}, which commands write anyway`
          : `it holds the workspace ${root}`,
        root,
      );
    }
    for (const system of HOST_FOLDERS) {
      if (overlap(system)) {
        const how =
          folder === system ? "it is" : isInside(system, folder) ? "it lies inside" : "it holds";
        throw refused(`${how} ${system}, a folder of the system or the sandbox's own`, system);
      }
    }
    for (const home of defaultHomeFolders(hostEnvironment)) {
      if (isInside(folder, home)) {
        throw refused(folder === home ? "it is a home folder" : `it holds the home ${home}`, home);
      }
      const [top] = path.relative(home, folder).split(path.sep);
      if (isInside(home, folder) && top?.startsWith(".")) {
        throw refused(
          `${path.join(home, top)} is a dot-entry at the top of a home, the configuration of programs the host runs`,
          home,
        );
      }
    }
    for (const [variable, { why, list }] of Object.entries(ROLE_VARIABLES)) {
      const value = hostEnvironment[variable];
      if (value === undefined || value === "") continue;
      for (const named of list ? value.split(":") : [value]) {
        if (!named.startsWith("/")) continue;
        const real = realpathOr(path.resolve(named));
        if (overlap(real))
          throw refused(`it overlaps ${real}, what the host's ${variable} names: ${why}`, real);
      }
    }
    for (const hidden of hiddenPaths) {
      if (overlap(hidden.path))
        throw refused(`it overlaps ${hidden.path}: ${hidden.rule}`, hidden.path);
    }
    for (const own of pleachFolders(hostEnvironment)) {
      if (overlap(own)) throw refused(`it overlaps ${own}, pleach's own caches or state`, own);
    }
    const other = folders.find(overlap);
    if (other !== undefined)
      throw refused(`it overlaps ${other}, also given: give one of them`, other);
    folders.push(folder);
  }
  return folders;
}

/** The real path of the folder `given` names, or `INVALID_INPUT` saying why there is none. */
function existingFolder(given: string): string {
  let real: string;
  try {
    real = realpathSync.native(path.resolve(given));
  } catch (error) {
    throw new ToolError(
      "INVALID_INPUT",
      `allowWrites (--allow-write) ${given} cannot be made writable for commands: it cannot be resolved (${(error as NodeJS.ErrnoException).code}); make the folder first`,
      { details: { path: given } },
    );
  }
  if (!statSync(real).isDirectory()) {
    throw new ToolError(
      "INVALID_INPUT",
      `allowWrites (--allow-write) ${given} cannot be made writable for commands: it is not a folder`,
      { details: { path: real } },
    );
  }
  return real;
}

/** pleach's own folders, where the caches of every workspace and the checkpoints lie. */
function pleachFolders(hostEnvironment: Readonly<Record<string, string | undefined>>): string[] {
  const cache = userCacheFolder(hostEnvironment);
  return [path.join(realpathOr(cache), "pleach"), realpathOr(userStateRoot())];
}
