import { type Dirent, readdirSync } from "node:fs";
import path from "node:path";
import { ToolError } from "@pleach/core";
import { lstatOr, statOr } from "./path-state.js";

/**
 * What `hideReads` (`--hide-read`) names, as the paths it hides now: a path as it is; a glob
 * (`**\/.env`, `/srv/app/*.pem`: `*` and `?` within a name, `[...]` a character of a set, `**` a
 * whole segment for any folders, none too) as the entries that match it now, on the file system,
 * found again at every use, so a file made since is hidden from the next command and file-tool call
 * on; and a preset (`@secrets`) as the globs it stands for, below the workspace. A glob that
 * matches nothing hides nothing. The one list `hiddenReads` makes of it serves commands and file
 * tools alike.
 */

/** A path `hideReads` hides now, and why. */
export interface HideReadPath {
  path: string;
  why: string;
}

/** A preset: one glob (relative to the workspace, walked once) and the names of the files it hides. */
interface Preset {
  glob: string;
  hides: (name: string) => boolean;
  why: string;
}

/** The names the secrets preset leaves out: examples and templates, which hold no secret. */
const NOT_SECRET = /\.(?:example|sample)$|^\.env\.template$/;

/** The presets `hideReads` takes, by name (`@secrets`). */
const HIDE_READ_PRESETS: Readonly<Record<string, Preset>> = {
  secrets: {
    glob: "**/.env*",
    hides: (name) => (name === ".env" || name.startsWith(".env.")) && !NOT_SECRET.test(name),
    why: "it is hidden by the secrets preset (--hide-read @secrets: .env and .env.* files of the workspace, but *.example, *.sample and .env.template)",
  },
};

/** The characters that make a `hideReads` entry a glob. */
const GLOB = /[*?[]/;
/** Folders a `**` does not descend into: git's own, and installed packages (never the user's secrets). */
const NOT_DESCENDED = new Set([".git", "node_modules"]);
/** The most folder entries one use of the globs looks at; past it the call is refused. */
const MAX_ENTRIES = 100_000;

/**
 * The paths `hideReads` hides now: paths resolved (from the current folder), globs and presets
 * expanded against what exists (a preset below `root`). Refuses (`INVALID_INPUT`) an unknown
 * preset, and a glob that meets more than {@link MAX_ENTRIES} entries.
 */
export function hideReadPaths(hideReads: readonly string[], root: string): HideReadPath[] {
  const found: HideReadPath[] = [];
  const budget = { left: MAX_ENTRIES };
  for (const entry of hideReads) {
    if (entry.startsWith("@")) {
      const preset = HIDE_READ_PRESETS[entry.slice(1)];
      if (preset === undefined) {
        throw new ToolError(
          "INVALID_INPUT",
          `hideReads ${JSON.stringify(entry)} is no preset; the presets are ${Object.keys(
            HIDE_READ_PRESETS,
          )
            .map((name) => `@${name}`)
            .join(", ")}. A path whose name starts with @ is written ./${entry}.`,
          { details: { hideRead: entry } },
        );
      }
      for (const match of globMatches(path.join(root, preset.glob), entry, budget)) {
        // Files only: a folder named `.env` is a Python virtual environment more often than not.
        if (preset.hides(path.basename(match)) && statOr(match)?.isDirectory() !== true) {
          found.push({ path: match, why: preset.why });
        }
      }
    } else if (GLOB.test(entry)) {
      const why = `it matches ${entry} of hideReads (--hide-read)`;
      const literal = path.resolve(entry);
      // A path whose name holds a glob character (`build[1]`) is hidden as it is too.
      if (exists(literal))
        found.push({ path: literal, why: "it is hidden by hideReads (--hide-read)" });
      for (const match of globMatches(literal, entry, budget)) found.push({ path: match, why });
    } else {
      found.push({ path: path.resolve(entry), why: "it is hidden by hideReads (--hide-read)" });
    }
  }
  return found;
}

/** The entries that match the absolute glob `glob` now, links not followed below its literal part. */
function globMatches(glob: string, given: string, budget: { left: number }): string[] {
  const segments = glob.split("/").filter((segment) => segment !== "");
  const matches: string[] = [];
  const listed = (folder: string): Dirent[] => {
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return [];
    }
    budget.left -= entries.length;
    if (budget.left < 0) {
      throw new ToolError(
        "INVALID_INPUT",
        `hideReads ${JSON.stringify(given)} meets more than ${MAX_ENTRIES.toLocaleString("en-US")} entries each time it is matched; give a narrower glob (a folder before its **: src/**/.env) or the paths themselves`,
        { details: { hideRead: given } },
      );
    }
    return entries;
  };
  const walk = (folder: string, index: number) => {
    const segment = segments[index];
    if (segment === undefined) {
      matches.push(folder);
      return;
    }
    if (segment === "**") {
      walk(folder, index + 1);
      for (const entry of listed(folder)) {
        if (entry.isDirectory() && !NOT_DESCENDED.has(entry.name)) {
          walk(path.join(folder, entry.name), index);
        }
      }
      return;
    }
    if (!GLOB.test(segment)) {
      const next = path.join(folder, segment);
      if (index + 1 < segments.length || exists(next)) walk(next, index + 1);
      return;
    }
    const matcher = nameMatcher(segment);
    const last = index + 1 === segments.length;
    for (const entry of listed(folder)) {
      if (matcher.test(entry.name) && (last || entry.isDirectory())) {
        walk(path.join(folder, entry.name), index + 1);
      }
    }
  };
  walk("/", 0);
  return [...new Set(matches)];
}

/** Whether anything, a link included, is at `target` (a folder above it that cannot be searched: no). */
function exists(target: string): boolean {
  try {
    return lstatOr(target) !== undefined;
  } catch {
    return false;
  }
}

/** A name glob (`*`, `?`, `[...]`) as a regular expression over a whole name. */
function nameMatcher(glob: string): RegExp {
  let source = "";
  for (let index = 0; index < glob.length; index++) {
    const character = glob[index] ?? "";
    if (character === "*") source += "[^/]*";
    else if (character === "?") source += "[^/]";
    else if (character === "[") {
      const close = glob.indexOf("]", index + 2);
      if (close === -1) source += "\\[";
      else {
        const set = glob.slice(index + 1, close);
        const members = (set.startsWith("!") ? set.slice(1) : set).replace(/\\/g, "\\\\");
        source += `[${set.startsWith("!") ? "^" : ""}${members}]`;
        index = close;
      }
    } else source += character.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "s");
}
