import type { HarnessV1SandboxProvider } from "@ai-sdk/harness";
import { createLocalSandboxProvider } from "@pleach/sandbox";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freeLoopbackPort } from "../testing/free-port.js";
import { makeTempDir } from "../testing/temp-dir.js";
import { toAISDKHarnessSandboxProvider } from "./ai-sdk.js";

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await makeTempDir("pleach-harness-"));
});
afterAll(() => cleanup());

it("gives the harness pleach sessions: files, commands, a job's port at the host's loopback, and stop", async () => {
  const port = await freeLoopbackPort();
  let firstCreate = 0;
  const provider: HarnessV1SandboxProvider = toAISDKHarnessSandboxProvider(
    createLocalSandboxProvider({ root, session: { publish: [port] } }),
    { ports: [port] },
  );
  expect(provider.specificationVersion).toBe("harness-sandbox-v1");
  const session = await provider.createSession({
    sessionId: "harness-1",
    onFirstCreate: async (created) => {
      firstCreate += 1;
      await created.writeTextFile({ path: "bootstrap.txt", content: "ready\n" });
    },
  });
  try {
    expect(firstCreate).toBe(1);
    expect(session).toMatchObject({
      id: "harness-1",
      defaultWorkingDirectory: root,
      ports: [port],
    });
    expect(await session.readTextFile({ path: "bootstrap.txt" })).toBe("ready\n");
    expect(await session.run({ command: "echo $((6 * 7))" })).toMatchObject({
      exitCode: 0,
      stdout: "42\n",
    });
    const server = await session.spawn({
      command: `python3 -c "
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b'bridge up')
    def log_message(self, *args): pass
http.server.HTTPServer(('127.0.0.1', ${port}), H).serve_forever()
"`,
    });
    const { url } = await session.getPortEndpoint({ port });
    expect(url).toBe(`http://127.0.0.1:${port}`);
    let answer = "";
    for (let attempt = 0; attempt < 100 && answer === ""; attempt += 1) {
      answer = await fetch(url).then(
        (response) => response.text(),
        () => new Promise<string>((resolve) => setTimeout(() => resolve(""), 100)),
      );
    }
    expect(answer).toBe("bridge up");
    await server.kill();
    await expect(session.getPortEndpoint({ port: port + 1 })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect(typeof session.restricted().run).toBe("function");
  } finally {
    await session.stop();
    await session.destroy();
  }
}, 60_000);
