// What the read view costs on real builds: npm, pip, cargo, go and git run through
// createLocalSandbox in workspace-write with a domain list (the registries only), each in a fresh
// workspace, timed whole, with the host's own HOME and PATH. Prints the time, whether it worked
// and, when not, the sandbox's notes. Needs the build (npx tsc -b), a working /usr/bin/bwrap and
// the registries reachable.
//
//   node bench/real-builds.mjs [runs]
//
// Each build also runs unconfined (danger-full-access) in the same run: what the sandbox costs.
// PLEACH_SANDBOX_BASELINE=/path/to/other/dist/index.js runs the same builds through another build
// of @pleach/sandbox (say, one made before a change), interleaved, for a before/after comparison.
import { execFileSync } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const runs = Number(process.argv[2] ?? 1);
const builds = {
  this: await import(new URL("../packages/sandbox/dist/index.js", import.meta.url).href),
};
if (process.env.PLEACH_SANDBOX_BASELINE) {
  builds.baseline = await import(path.resolve(process.env.PLEACH_SANDBOX_BASELINE));
}
const has = (program) => {
  try {
    execFileSync("/bin/sh", ["-c", `command -v ${program}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};
const allowDomains = [
  "registry.npmjs.org",
  "pypi.org",
  "files.pythonhosted.org",
  "proxy.golang.org",
  "sum.golang.org",
  "index.crates.io",
  "static.crates.io",
];
const jobs = {
  npm: "npm init -y >/dev/null && npm install --no-audit --no-fund is-number@7.0.0 && node -e 'require(\"is-number\")'",
  pip: "python3 -m pip install --disable-pip-version-check -q --target ./py six && PYTHONPATH=py python3 -c 'import six'",
  venv: "python3 -m venv venv && venv/bin/python -m pip --version >/dev/null && venv/bin/python -c 'import json, ssl'",
  "cargo-offline": has("cargo")
    ? "cargo new -q --vcs none hello && cd hello && cargo build -q --offline && ./target/debug/hello"
    : undefined,
  cargo: has("cargo")
    ? "cargo new -q --vcs none hello && cd hello && echo 'itoa = \"1\"' >> Cargo.toml && cargo build -q"
    : undefined,
  go: has("go")
    ? // go's caches live in the home, which commands see empty and read-only (as before: the host
      // was read-only): its failure note says to point them at /tmp.
      "export GOCACHE=/tmp/go-build GOPATH=/tmp/go && go mod init example.com/x && printf 'package main\\nimport \"fmt\"\\nfunc main(){fmt.Println(1)}\\n' > m.go && go build -buildvcs=false ./... && ./x"
    : undefined,
  // The workspace's own .git is protected from commands; a repository made inside is theirs to make.
  git: "git init -q repo && cd repo && echo x > f && git add f && git -c user.name=b -c user.email=b@x commit -qm x && git log --oneline | wc -l",
};

for (let run = 0; run < runs; run += 1) {
  for (const [job, command] of Object.entries(jobs)) {
    if (command === undefined) {
      console.log(`${job.padEnd(13)} skipped: not installed`);
      continue;
    }
    // The baseline: the same build unconfined (danger-full-access), in the same run, in a fresh
    // workspace. It uses the host's own caches (~/.npm, ~/.cache/pip, ...), as the user's build
    // would, where the sandboxed runs see an empty home: the difference includes those caches.
    for (const [name, sandbox, confined] of [
      ...Object.entries(builds).map(([label, build]) => [label, build, true]),
      ["unconfined", builds.this, false],
    ]) {
      const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pleach-bench-build-")));
      const client = await sandbox.createLocalSandbox(
        confined
          ? { root, mode: "workspace-write", network: { allowDomains } }
          : { root, mode: "danger-full-access" },
      );
      const started = performance.now();
      const result = await client.exec(command, { timeoutMs: 300_000 });
      const elapsed = performance.now() - started;
      const worked = result.exitCode === 0 ? "ok" : `FAILED (exit ${result.exitCode})`;
      console.log(
        `${job.padEnd(13)} ${name.padEnd(10)} ${(elapsed / 1000).toFixed(2).padStart(7)} s  ${worked}`,
      );
      if (result.exitCode !== 0) {
        console.log(`    stderr: ${result.stderr.trim().split("\n").slice(-4).join("\n    ")}`);
        for (const note of result.sandboxNotes ?? []) console.log(`    note: ${note}`);
      }
      await client.close?.();
      await rm(root, { recursive: true, force: true });
    }
  }
}
