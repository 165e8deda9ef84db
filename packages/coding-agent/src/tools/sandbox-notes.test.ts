// The notes that name the way out, one per rule a command or a tool meets, as the model reads
// them: one table over a real local sandbox.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { createLocalSandbox } from "@pleach/sandbox";
import { describe, expect, it } from "vitest";
import { createCodingAgentTools } from "./coding-agent-tools.js";

const probe = await createLocalSandbox({ root: process.cwd() });
const commands = probe.backend === "bubblewrap";
await probe.close();

/** Each rule: the tool call that meets it, and what the model must read of the way out. */
const table: { rule: string; tool: string; input: Record<string, unknown>; says: RegExp[] }[] = [
  {
    rule: "a command killed at its limit while the network is off",
    tool: "bash",
    input: {
      command: `node -e "setInterval(() => require('dns').lookup('registry.npmjs.org', () => {}), 100)"`,
      timeout: 1500,
    },
    says: [
      /\[timed out after 1500 ms and was killed; the network is off for commands here/,
      /a larger timeout will not help\. It is turned on where pleach is started: `--allow-domain HOST`/,
    ],
  },
  {
    rule: "a hidden file a command reads",
    tool: "bash",
    input: { command: "cat .env" },
    says: [
      /\[sandbox: reading \.env was refused: .* hidden by hideReads \(--hide-read\)\. .*--allow-read /,
    ],
  },
  {
    rule: "a hidden file a search meets",
    tool: "search_files",
    input: { pattern: "SECRET" },
    says: [
      /No matches\. \[1 hidden path skipped \(--hide-read\): .*--allow-read <path> \(allowReads\)\]/,
    ],
  },
  {
    rule: "a write to the repository's git machinery",
    tool: "bash",
    input: { command: "git add a.txt && git -c user.email=a@b -c user.name=a commit -qm x" },
    says: [
      /\[sandbox: writing \.git\/index\.lock was refused: \.git at the top of the workspace is protected: git runs its hooks and the commands its config names .* ask the user to make this change\. git commands cannot write the repository .* start pleach with --allow-git-writes \(allowGitWrites: true\)/,
    ],
  },
  {
    rule: "a git command that fails writing the repository without a word",
    tool: "bash",
    input: { command: "echo more >> a.txt && git stash" },
    says: [/\[sandbox: git commands cannot write the repository .* --allow-git-writes/],
  },
  {
    rule: "a cache a tool writes in the read-only home",
    tool: "bash",
    input: { command: "mkdir -p ~/.cache/tool && echo x > ~/.cache/tool/f" },
    says: [
      /\[sandbox: writing .*\.cache was refused: .* is an empty read-only folder for commands .* Point the tool's cache or settings at \/tmp or the workspace \(GOCACHE=\/tmp\/go-build, npm_config_cache=\/tmp\/npm/,
    ],
  },
];

describe.skipIf(!commands)(
  `the sandbox's notes, as the model reads them${commands ? "" : " (skipped: no bubblewrap here to run the commands)"}`,
  () => {
    it.each(table)(
      "$rule",
      async ({ tool, input, says }) => {
        const root = await useTempDir();
        execFileSync("git", ["init", "-q", root]);
        writeFileSync(path.join(root, ".env"), "SECRET=1\n");
        writeFileSync(path.join(root, "a.txt"), "hi\n");
        const client = await createLocalSandbox({ root, hideReads: [path.join(root, ".env")] });
        try {
          const tools = Object.fromEntries(
            createCodingAgentTools(client).map((each) => [each.name, each]),
          );
          const called = tools[tool];
          if (called === undefined) throw new Error(`no tool ${tool}`);
          const output = called.toModelOutput(await called.execute(input as never, {})).output;
          for (const pattern of says) expect(output).toMatch(pattern);
        } finally {
          await client.close();
        }
      },
      60_000,
    );
  },
);
