import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { attackSuiteSkipReason, runningAs } from "./test-support/suite.js";

// A descriptor pleach's process inherited without close-on-exec (whatever started it left it
// open) passes to bubblewrap and would reach every command: a way out to whatever it names.

const skipReason = await attackSuiteSkipReason();

describe.skipIf(skipReason !== undefined)(
  `descriptors pleach inherited ${runningAs()}${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("reach no command: not one-off, not long, not in a session, not in a job", async () => {
      const root = await useTempDir();
      const leak = path.join(await useTempDir(), "leak");
      await writeFile(leak, "");
      const probe = 'ls /proc/self/fd | tr "\\n" " "; echo x >&33 && echo wrote';
      const script = [
        `import { createLocalSandbox } from ${JSON.stringify(new URL("../../dist/index.js", import.meta.url).href)};`,
        `const root = ${JSON.stringify(root)};`,
        `const probe = ${JSON.stringify(probe)};`,
        "const seen = [];",
        "for (const session of [false, true]) {",
        "  const client = await createLocalSandbox({ root, session });",
        "  seen.push((await client.exec(probe)).stdout);",
        `  seen.push((await client.exec(": ${"y".repeat(70_000)}\\n" + probe)).stdout);`,
        "  if (session) {",
        "    const job = await client.jobs.start(probe);",
        "    seen.push((await client.jobs.output(job.jobId, { waitMs: 10000, until: '\\\\n$' })).output);",
        "  }",
        "  await client.close();",
        "}",
        "console.log(JSON.stringify(seen));",
      ].join("\n");
      // The shell opens fd 33 on the file and starts node with it, as a launcher might.
      const output = execFileSync(
        "/bin/bash",
        [
          "-c",
          'exec 33>>"$1"; exec "$2" --input-type=module -e "$3"',
          "bash",
          leak,
          process.execPath,
          script,
        ],
        { encoding: "utf8" },
      );
      const seen = JSON.parse(output) as string[];
      expect(seen).toHaveLength(5);
      for (const each of seen) {
        expect(each.split(" ")).not.toContain("33");
        expect(each).not.toContain("wrote");
      }
      expect(await readFile(leak, "utf8")).toBe("");
    });
  },
);
