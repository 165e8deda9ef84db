const W = "/work/wt/h28-speed";
const { Client } = await import("@modelcontextprotocol/client");
const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
const c = new Client({ name: "p", version: "1" });
await c.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [`${W}/packages/cli/bin/pleach.js`, "mcp", "--workspace", process.argv[2]],
    stderr: "ignore",
  }),
);
const r = await c.callTool({ name: process.argv[3], arguments: JSON.parse(process.argv[4]) });
console.log(JSON.stringify(r).length, Object.keys(r), JSON.stringify(r).slice(0, 600));
await c.close();
