import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createLocalSandbox } from "../local-sandbox.js";
import { attackSuiteSkipReason } from "./test-support/suite.js";

const skipReason = await attackSuiteSkipReason();
/** A `go` on this machine's PATH, if any. */
const go = (() => {
  try {
    return (
      execFileSync("/bin/sh", ["-c", "command -v go"], { encoding: "utf8" }).trim() || undefined
    );
  } catch {
    return undefined;
  }
})();

describe.skipIf(skipReason !== undefined)(
  `what a command is told of a placeholder .git${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("tells Go not to stamp builds with a repository that is a placeholder, and only then", async () => {
      const plain = await useTempDir();
      const repository = await useTempDir();
      execFileSync("git", ["init", "-q", repository]);
      const inPlain = await createLocalSandbox({ root: plain });
      const inRepository = await createLocalSandbox({ root: repository });
      expect((await inPlain.exec('printf %s "$GOFLAGS"')).stdout).toBe("-buildvcs=false");
      expect((await inRepository.exec('printf %s "$GOFLAGS"')).stdout).toBe("");
      // What the caller gives is kept.
      expect(
        (await inPlain.exec('printf %s "$GOFLAGS"', { env: { GOFLAGS: "-mod=vendor" } })).stdout,
      ).toBe("-mod=vendor");
    });

    it.skipIf(go === undefined)(
      `builds a Go module in a folder that is no git repository${go === undefined ? " (skipped: no go on this machine's PATH)" : ""}`,
      async () => {
        const root = await useTempDir();
        writeFileSync(path.join(root, "go.mod"), "module example.com/hello\n\ngo 1.19\n");
        writeFileSync(
          path.join(root, "main.go"),
          'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n',
        );
        const client = await createLocalSandbox({ root });
        const built = await client.exec(
          "GOCACHE=/tmp/go-build GOPATH=/tmp/go go build -o /tmp/hello . && /tmp/hello",
          { timeoutMs: 120_000 },
        );
        expect(built).toMatchObject({ exitCode: 0, stdout: "hello\n" });
      },
      180_000,
    );
  },
);
