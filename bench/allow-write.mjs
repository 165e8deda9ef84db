// What `allowWrites` (`--allow-write DIR`) costs a call, through the public API alone
// (`createLocalSandbox`): a warm command and a file tool's write in a small workspace, without an
// extra writable folder, with a small one, and with one of many folders (which each command walks
// and protects as it does the workspace), beside `find` over that folder, in the same run.
// Needs the build (npx tsc -b) and a working /usr/bin/bwrap.
//
//   node bench/allow-write.mjs [runs] [folders]
//
// Rows:
//   find DIR                 /usr/bin/find over the big extra folder
//   exec, none               exec("true"), no allowWrites
//   exec, small DIR          the same with a writable folder of a few entries
//   exec, big DIR            the same with a writable folder of [folders] folders
//   writeFile, ...           a file tool's write of a small file in the workspace, the same three ways
import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const runs = Number(process.argv[2] ?? 15);
const folders = Number(process.argv[3] ?? 20_000);

const { createLocalSandbox } = await import(
  new URL("../packages/sandbox/dist/index.js", import.meta.url).href
).catch((error) => {
  console.error(`cannot load the build (npx tsc -b first): ${error.message}`);
  process.exit(2);
});

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const made = [];
/** A new folder in `parent`: the workspace in the temporary folder, the writable ones in the home. */
async function folder(parent, prefix) {
  const made_ = await realpath(await mkdtemp(path.join(parent, prefix)));
  made.push(made_);
  return made_;
}

function find(root) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn("/usr/bin/find", [root], { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`find exited ${code}`)),
    );
  });
}

async function timed(run) {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

try {
  const root = await folder(os.tmpdir(), "pleach-bench-allow-write-");
  execFileSync("git", ["init", "-q", root]);
  await writeFile(path.join(root, "a.txt"), "a\n");
  const small = await folder(os.homedir(), "pleach-bench-allow-write-small-");
  await writeFile(path.join(small, "notes.txt"), "n\n");
  const big = await folder(os.homedir(), "pleach-bench-allow-write-big-");
  for (let index = 0; index < Math.ceil(folders / 50); index += 1) {
    const lib = path.join(big, `package-${index}`, "lib");
    await Promise.all(
      Array.from({ length: 48 }, (_, each) =>
        mkdir(path.join(lib, `d${each}`), { recursive: true }),
      ),
    );
  }
  const ways = [
    ["none", undefined],
    ["small DIR", [small]],
    [`big DIR (${folders})`, [big]],
  ];
  const clients = [];
  for (const [name, allowWrites] of ways) {
    const client = await createLocalSandbox({
      root,
      mode: "workspace-write",
      ...(allowWrites === undefined ? {} : { allowWrites }),
    });
    const result = await client.exec("true");
    if (result.exitCode !== 0) throw new Error(`${name}: exit ${result.exitCode} ${result.stderr}`);
    clients.push({ name, client, exec: [], write: [] });
  }
  const finds = [];
  for (let run = 0; run < runs; run += 1) {
    finds.push(await find(big));
    for (const each of clients) {
      each.exec.push(
        await timed(async () => {
          const result = await each.client.exec("true");
          if (result.exitCode !== 0) throw new Error(`exit ${result.exitCode}`);
        }),
      );
      each.write.push(await timed(() => each.client.writeFile("b.txt", `b ${run}\n`)));
    }
  }
  const findMs = median(finds);
  console.log(`${"find DIR".padEnd(34)} ${findMs.toFixed(1).padStart(8)} ms`);
  const none = clients[0];
  for (const kind of ["exec", "write"]) {
    const base = median(none[kind]);
    for (const each of clients) {
      const value = median(each[kind]);
      const label = `${kind === "exec" ? "exec" : "writeFile"}, ${each.name}`;
      console.log(
        `${label.padEnd(34)} ${value.toFixed(1).padStart(8)} ms  ${(value / base).toFixed(2)}x none  ${(value / findMs).toFixed(2)}x find DIR`,
      );
    }
  }
  for (const { client } of clients) await client.close();
} finally {
  for (const each of made) await rm(each, { recursive: true, force: true });
}
