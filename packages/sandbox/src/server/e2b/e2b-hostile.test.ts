// Hostile requests and file operations over the E2B face, from an outsider on loopback (raw
// fetch, for what the SDK will not send) and from a sandbox's own envd calls (the e2b SDK).
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { forceRemove, makeTempDir } from "@pleach/core/testing";
import { Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCommandWrapper } from "../../os/create-command-wrapper.js";
import { createSandboxServer, type SandboxServer } from "../sandbox-server.js";

const TOKEN = "e2b-hostile-token-0123456789abcdef";
let server: SandboxServer;
let root: string;
let url: string;
let connection: { apiKey: string; apiUrl: string; sandboxUrl: string };

/** An E2B face on loopback over the shared root, with `options` over the defaults. */
const startServer = (options: Partial<Parameters<typeof createSandboxServer>[0]>) =>
  createSandboxServer({
    root,
    token: TOKEN,
    protocol: "e2b",
    commandWrapper: createCommandWrapper({ warmSandbox: false }),
    ...options,
  });

beforeAll(async () => {
  root = (await makeTempDir("pleach-e2b-hostile-")).dir;
  server = await startServer({ heartbeatMs: 500 });
  url = server.url.href.replace(/\/$/, "");
  connection = { apiKey: TOKEN, apiUrl: url, sandboxUrl: url };
});

afterAll(async () => {
  await server?.close();
  await forceRemove(root);
});

/** The status of a GET sent with exactly these headers (Host included). */
function rawStatus(route: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${url}${route}`, { headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", reject);
  });
}

const api = (route: string, init: RequestInit = {}) =>
  fetch(`${url}${route}`, {
    ...init,
    headers: { "x-api-key": TOKEN, "content-type": "application/json", ...init.headers },
  });

describe("hostile requests to the E2B face", () => {
  it("refuses template names that are Object.prototype's (a 400, not a crash)", async () => {
    for (const templateID of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const answer = await api("/sandboxes", {
        method: "POST",
        body: JSON.stringify({ templateID }),
      });
      expect(answer.status, templateID).toBe(400);
      expect(await answer.json()).toMatchObject({ code: 400, message: /no template/ });
    }
  });

  it("takes no template name that leaves the template root", async () => {
    const templates = (await makeTempDir("pleach-e2b-templates-")).dir;
    await mkdir(path.join(templates, "ok"));
    await writeFile(path.join(templates, "ok", "a.txt"), "a\n");
    const withRoot = await startServer({ templateRoot: templates });
    try {
      const base = withRoot.url.href.replace(/\/$/, "");
      const create = (templateID: string) =>
        fetch(`${base}/sandboxes`, {
          method: "POST",
          headers: { "x-api-key": TOKEN, "content-type": "application/json" },
          body: JSON.stringify({ templateID }),
        });
      for (const name of [
        "../../etc",
        "..",
        ".",
        "ok/../..",
        "/etc",
        "%2e%2e",
        "ok\u0000",
        ".git",
      ]) {
        const answer = await create(name);
        expect(answer.status, name).toBeGreaterThanOrEqual(400);
        expect(answer.status, name).toBeLessThan(500);
      }
      const made = await create("ok");
      expect(made.status).toBe(201);
      const { sandboxID } = (await made.json()) as { sandboxID: string };
      await fetch(`${base}/sandboxes/${sandboxID}`, {
        method: "DELETE",
        headers: { "x-api-key": TOKEN },
      });
    } finally {
      await withRoot.close();
      await forceRemove(templates);
    }
  });

  it("refuses a list metadata query that is not valid percent-encoding (a 400)", async () => {
    const answer = await api(`/sandboxes?metadata=${encodeURIComponent("a=%zz")}`);
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ message: /percent-encoding/ });
  });

  it("asks for the token and a loopback Host on every route, and finds no sandbox by a made-up id", async () => {
    const sandbox = await Sandbox.create({ ...connection });
    try {
      const id = sandbox.sandboxId;
      const refused: [string, RequestInit & { headers: Record<string, string> }][] = [
        ["/health", { headers: { "e2b-sandbox-id": id } }],
        ["/files?path=a", { headers: { "e2b-sandbox-id": id } }],
        [
          "/process.Process/List",
          {
            method: "POST",
            headers: { "e2b-sandbox-id": id, "content-type": "application/json" },
            body: "{}",
          },
        ],
        ["/sandboxes", { headers: {} }],
        ["/sandboxes", { headers: { "x-api-key": "wrong-token-0123456789abcdef" } }],
        ["/sandboxes", { headers: { "x-api-key": TOKEN.toUpperCase() } }],
        ["/sandboxes", { headers: { cookie: `x-api-key=${TOKEN}` } }],
        ["/sandboxes", { headers: { authorization: `Bearer wrong`, "x-api-key": TOKEN } }],
        [
          "/health",
          {
            headers: {
              "x-access-token": TOKEN,
              "e2b-sandbox-id": id,
              origin: "http://evil.example.com",
            },
          },
        ],
      ];
      for (const [route, init] of refused) {
        const answer = await fetch(`${url}${route}`, init);
        expect([401, 403], `${route} ${JSON.stringify(init.headers)}`).toContain(answer.status);
      }
      // fetch drops a Host header it is given: sent raw, as a rebinding page's request arrives.
      for (const host of ["evil.example.com", "localhost.evil.example.com", "127.0.0.1.nip.io"]) {
        for (const headers of [
          { "x-api-key": TOKEN } as Record<string, string>,
          { "x-access-token": TOKEN, "e2b-sandbox-id": id },
        ]) {
          expect(await rawStatus("/health", { ...headers, host }), host).toBe(403);
        }
      }
      for (const made of ["../x", "..%2F..%2Fetc", "__proto__", "constructor", id.toUpperCase()]) {
        const answer = await fetch(`${url}/health`, {
          headers: { "x-access-token": TOKEN, "e2b-sandbox-id": made },
        });
        expect(answer.status, made).toBe(404);
        const api404 = await api(`/sandboxes/${encodeURIComponent(made)}`);
        expect(api404.status, made).toBe(404);
      }
    } finally {
      await sandbox.kill();
    }
  });

  it("keeps one sandbox's commands and envd file calls out of another's workspace", async () => {
    const a = await Sandbox.create({ ...connection });
    const b = await Sandbox.create({ ...connection });
    try {
      await b.files.write("secret.txt", "b-secret\n");
      const where = (await b.commands.run("pwd")).stdout.trim();
      const tried = await a.commands
        .run(`cat ${where}/secret.txt; echo x > ${where}/planted && echo PLANTED`)
        .catch((error: { stdout?: string }) => error);
      expect(tried.stdout ?? "").not.toMatch(/b-secret|PLANTED/);
      await expect(a.files.getInfo(`${where}/secret.txt`)).rejects.toThrow(/does not exist/);
      await expect(a.files.remove(`${where}/secret.txt`)).rejects.toThrow();
      await expect(a.files.rename(`${where}/secret.txt`, "stolen.txt")).rejects.toThrow();
      await expect(a.files.read(`${where}/secret.txt`)).rejects.toThrow();
      await expect(a.files.write(`${where}/planted`, "x")).rejects.toThrow();
      expect(await b.files.read("secret.txt")).toBe("b-secret\n");
      expect(await b.files.exists("planted")).toBe(false);
    } finally {
      await a.kill();
      await b.kill();
    }
  });

  it("does not follow a command's links out of its workspace or into .git through /files", async () => {
    const a = await Sandbox.create({ ...connection });
    const b = await Sandbox.create({ ...connection });
    try {
      await b.files.write("secret.txt", "b-secret\n");
      const other = path.basename((await b.commands.run("pwd")).stdout.trim());
      await a.commands.run(
        `ln -s ../${other} sibling; ln -s ${root}/${other}/secret.txt direct; ln -s /etc etc; ln -s .git/hooks hooks; ln -s .envrc rc`,
      );
      for (const target of ["sibling/secret.txt", "direct", "etc/passwd"]) {
        await expect(a.files.read(target), target).rejects.toThrow();
      }
      for (const target of ["sibling/planted", "direct", "hooks/pre-commit", "rc", "etc/x"]) {
        await expect(a.files.write(target, "#!/bin/sh\necho PWNED\n"), target).rejects.toThrow();
      }
      expect(await b.files.read("secret.txt")).toBe("b-secret\n");
      expect(await b.files.exists("planted")).toBe(false);
      // A multipart upload names its files by their part names: the same walk refuses them.
      const sandboxHeaders = { "x-access-token": TOKEN, "e2b-sandbox-id": a.sandboxId };
      for (const name of [`../${other}/planted`, `${root}/${other}/planted`, "sibling/planted"]) {
        const form = new FormData();
        form.append("file", new Blob(["x"]), name);
        const answer = await fetch(`${url}/files`, {
          method: "POST",
          headers: sandboxHeaders,
          body: form,
        });
        expect(answer.status, name).toBeGreaterThanOrEqual(400);
        expect(answer.status, name).toBeLessThan(500);
      }
      expect(await b.files.exists("planted")).toBe(false);
    } finally {
      await a.kill();
      await b.kill();
    }
  });

  it("answers bodies past the request limit with a 413, on /files and on RPC", async () => {
    const small = await startServer({ maxRequestBytes: 64 * 1024 });
    try {
      const base = small.url.href.replace(/\/$/, "");
      const sandbox = await Sandbox.create({ apiKey: TOKEN, apiUrl: base, sandboxUrl: base });
      try {
        const headers = { "x-access-token": TOKEN, "e2b-sandbox-id": sandbox.sandboxId };
        const big = Buffer.alloc(1024 * 1024, "a");
        const files = await fetch(`${base}/files?path=big`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/octet-stream" },
          body: big,
        });
        expect(files.status).toBe(413);
        const rpc = await fetch(`${base}/filesystem.Filesystem/Stat`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ path: big.toString() }),
        });
        expect(rpc.status).toBeGreaterThanOrEqual(400);
        const created = await fetch(`${base}/sandboxes`, {
          method: "POST",
          headers: { "x-api-key": TOKEN, "content-type": "application/json" },
          body: JSON.stringify({ templateID: "base", metadata: { a: big.toString() } }),
        });
        expect(created.status).toBe(413);
        expect(await sandbox.files.exists("big")).toBe(false);
      } finally {
        await sandbox.kill();
      }
    } finally {
      await small.close();
    }
  });

  it("finds a process only in its own sandbox, and no sandbox by two ids at once", async () => {
    const a = await Sandbox.create({ ...connection });
    const b = await Sandbox.create({ ...connection });
    try {
      const job = await a.commands.run("sleep 30", { background: true, stdin: true });
      expect(await b.commands.kill(job.pid)).toBe(false);
      await expect(b.commands.connect(job.pid)).rejects.toThrow(/no process/);
      await expect(b.commands.sendStdin(job.pid, "x")).rejects.toThrow(/no process/);
      expect((await b.commands.list()).map((process) => process.pid)).not.toContain(job.pid);
      expect(
        await rawStatus("/health", {
          "x-access-token": TOKEN,
          // Node joins a repeated header: "A, B" names no sandbox.
          "e2b-sandbox-id": [a.sandboxId, b.sandboxId] as unknown as string,
        }),
      ).toBe(404);
      expect(await a.commands.kill(job.pid)).toBe(true);
    } finally {
      await a.kill();
      await b.kill();
    }
  });

  it("refuses a create past the server's limit, and a connect to a killed sandbox", async () => {
    const small = await startServer({ maxSandboxes: 2 });
    try {
      const base = small.url.href.replace(/\/$/, "");
      const options = { apiKey: TOKEN, apiUrl: base, sandboxUrl: base };
      const made = await Promise.all([Sandbox.create(options), Sandbox.create(options)]);
      await expect(Sandbox.create(options)).rejects.toThrow(/limit of 2 sandboxes/);
      const [first] = made as [Sandbox, Sandbox];
      await first.kill();
      await expect(Sandbox.connect(first.sandboxId, options)).rejects.toThrow();
      const again = await Sandbox.create(options);
      await Promise.all([again.kill(), (made[1] as Sandbox).kill()]);
    } finally {
      await small.close();
    }
  });

  it("refuses protected paths through /files and the filesystem service", async () => {
    const sandbox = await Sandbox.create({ ...connection });
    try {
      for (const target of [".git/hooks/pre-commit", ".git/config", ".envrc", "a/../.envrc"]) {
        await expect(
          sandbox.files.write(target, "#!/bin/sh\necho PWNED\n"),
          target,
        ).rejects.toThrow(/refusing to write|protected/);
      }
      // The workspace is no repository: a .git the filesystem service makes is a command's, and
      // its hooks are moved aside when that command ends.
      await sandbox.files.makeDir(".git/hooks/x");
      expect(existsSync(path.join(root, ".git/hooks"))).toBe(false);
      await sandbox.files.write("p", "x");
      // From then on .git is protected as it stands.
      await expect(sandbox.files.rename("p", ".git/hooks/pre-commit")).rejects.toThrow();
      await expect(sandbox.files.rename(".git", "g2")).rejects.toThrow();
      expect(existsSync(path.join(root, ".git/hooks/pre-commit"))).toBe(false);
      expect((await sandbox.commands.run("ls -A")).stdout).not.toContain(".envrc");
    } finally {
      await sandbox.kill();
    }
  });

  it("hands create's LD_PRELOAD, BASH_ENV and PATH to the command only, and keeps cwd inside", async () => {
    const sandbox = await Sandbox.create({
      ...connection,
      envs: {
        LD_PRELOAD: "/nonexistent/evil.so",
        BASH_ENV: "/nonexistent/x",
        PATH: "/nonexistent",
      },
    });
    try {
      const run = await sandbox.commands.run("/usr/bin/env");
      expect(run.stdout).toContain("LD_PRELOAD=/nonexistent/evil.so");
      // The loader's complaints come from the command's own programs, never from the launcher.
      expect(run.stderr).not.toMatch(/bwrap|sandbox/i);
      for (const cwd of ["/", "/etc", "..", "/tmp", root]) {
        await expect(sandbox.commands.run("/bin/pwd", { cwd }), cwd).rejects.toThrow(
          /escapes the workspace/,
        );
      }
      const envs = { PATH: "/usr/bin:/bin" };
      await sandbox.commands.run(`ln -s / top; ln -s ${root} serverRoot; ln -s .git dotgit`, {
        envs,
      });
      for (const cwd of ["top", "top/etc", "serverRoot"]) {
        await expect(sandbox.commands.run("/bin/pwd", { cwd }), cwd).rejects.toThrow(
          /escapes the workspace/,
        );
      }
      await expect(sandbox.commands.run("touch x", { cwd: "dotgit", envs })).rejects.toThrow();
      expect((await sandbox.commands.run("ls -A .git | wc -l", { envs })).stdout.trim()).toBe("0");
    } finally {
      await sandbox.kill();
    }
  });

  it("takes path names with quotes, newlines, $() and a leading - as names", async () => {
    const sandbox = await Sandbox.create({ ...connection });
    try {
      for (const name of [
        "-rf",
        "a'b",
        'a"b',
        "a\nb",
        "$(touch PWNED)",
        "`touch PWNED`",
        "--help",
      ]) {
        expect(await sandbox.files.makeDir(name), name).toBe(true);
        expect((await sandbox.files.getInfo(name)).name).toBe(name);
        expect((await sandbox.files.rename(name, `${name}.2`)).name).toBe(`${name}.2`);
        await sandbox.files.remove(`${name}.2`);
        expect(await sandbox.files.exists(`${name}.2`)).toBe(false);
      }
      expect((await sandbox.commands.run("ls -A")).stdout).not.toMatch(/PWNED|^-/m);
    } finally {
      await sandbox.kill();
    }
  });

  it("refuses timeouts of 0, negative, fractional or past the safe range, and a killed sandbox", async () => {
    for (const timeout of [0, -1, 1e20, 1.5, "1"]) {
      const answer = await api("/sandboxes", {
        method: "POST",
        body: JSON.stringify({ templateID: "base", timeout }),
      });
      expect(answer.status, String(timeout)).toBe(400);
    }
    const sandbox = await Sandbox.create({ ...connection });
    await sandbox.setTimeout(86_400_000 * 10);
    expect((await sandbox.getInfo()).endAt.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
    await sandbox.kill();
    await expect(sandbox.commands.run("true")).rejects.toThrow();
    await expect(sandbox.files.read("a")).rejects.toThrow();
  });
});
