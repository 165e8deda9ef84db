import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createPlaceholders, type Identity, removePlaceholders } from "./placeholder-folder.js";

const LSATTR = ["/usr/bin/lsattr", "/bin/lsattr"].find((file) => existsSync(file));

/** Whether `target` carries the immutable flag (`false` where `lsattr` cannot tell). */
function immutable(target: string): boolean {
  if (LSATTR === undefined) return false;
  const shown = spawnSync(LSATTR, ["-d", "--", target], { encoding: "utf8" }).stdout ?? "";
  return (shown.split(" ")[0] ?? "").includes("i");
}

describe("placeholder folders worked on by the host while a job swaps paths", () => {
  it("makes no placeholder through a folder a job swapped for a link to a host folder", async () => {
    const base = await useTempDir();
    const workspace = path.join(base, "workspace");
    const host = path.join(base, "host");
    mkdirSync(workspace);
    mkdirSync(host);
    symlinkSync(host, path.join(workspace, "sub"));
    const [identity] = createPlaceholders([path.join(workspace, "sub", ".envrc")], Date.now());
    expect(identity).toBeUndefined();
    expect(existsSync(path.join(host, ".envrc"))).toBe(false);
  });

  it("never changes the mode or the flags of a host file while a job swaps the placeholder's folder for a link", async () => {
    const base = await useTempDir();
    const workspace = path.join(base, "workspace");
    const secret = path.join(base, "secret");
    mkdirSync(path.join(workspace, "d"), { recursive: true });
    mkdirSync(path.join(workspace, "evil"));
    writeFileSync(secret, "host file\n", { mode: 0o600 });
    symlinkSync(secret, path.join(workspace, "evil", ".envrc"));
    const target = path.join(workspace, "d", ".envrc");
    // The job's side: again and again, for a moment, `d` is a link to `evil`, where `.envrc` is a
    // link to the host file: a path the host walks by name then leads to the host file.
    const job = spawn(
      "/bin/bash",
      [
        "-c",
        'cd "$1"; while :; do mv d d.real && ln -s evil d && sleep 0.002; rm -f d; mv d.real d; sleep 0.00$((RANDOM % 3)); done',
        "bash",
        workspace,
      ],
      { stdio: "ignore" },
    );
    let standing: { path: string; identity: Identity }[] = [];
    try {
      for (let round = 0; round < 1000; round += 1) {
        if (standing.length === 0) {
          const [identity] = createPlaceholders([target], Date.now());
          if (identity !== undefined) standing = [{ path: target, identity }];
        }
        if (removePlaceholders(standing).length > 0) standing = [];
        expect(statSync(secret).mode & 0o7777).toBe(0o600);
        expect(immutable(secret)).toBe(false);
      }
    } finally {
      job.kill("SIGKILL");
    }
    removePlaceholders(standing);
  });
});
