import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { readInstances } from "./instances.js";

const valid = {
  instance_id: "one",
  repo: "owner/name",
  base_commit: "abc",
  problem_statement: "fix it",
  test_patch: "",
  FAIL_TO_PASS: '["a", "b"]',
};

async function instancesFile(lines: string[]): Promise<string> {
  const folder = await mkdtemp(path.join(os.tmpdir(), "pleach-eval-instances-"));
  onTestFinished(() => rm(folder, { recursive: true, force: true }));
  const file = path.join(folder, "instances.jsonl");
  await writeFile(file, `${lines.join("\n")}\n`);
  return file;
}

describe("readInstances", () => {
  it("reads SWE-bench's JSON-text lists and plain arrays, and drops fields it does not use", async () => {
    const file = await instancesFile([
      JSON.stringify({ ...valid, hints_text: "ignored", PASS_TO_PASS: null }),
      "",
      JSON.stringify({ ...valid, instance_id: "two", FAIL_TO_PASS: ["c"], PASS_TO_PASS: ["d"] }),
    ]);
    expect(await readInstances(file)).toEqual([
      { ...valid, FAIL_TO_PASS: ["a", "b"], PASS_TO_PASS: [] },
      { ...valid, instance_id: "two", FAIL_TO_PASS: ["c"], PASS_TO_PASS: ["d"] },
    ]);
  });

  it("reads SWE-bench's version as text, a number as its digits", async () => {
    const file = await instancesFile([
      JSON.stringify({ ...valid, version: "3.0" }),
      JSON.stringify({ ...valid, instance_id: "two", version: 1.9 }),
    ]);
    expect((await readInstances(file)).map((instance) => instance.version)).toEqual(["3.0", "1.9"]);
  });

  it("names the line and the field that is wrong", async () => {
    const { base_commit: _dropped, ...withoutCommit } = valid;
    const cases: Array<[unknown, string]> = [
      [withoutCommit, "line 2: base_commit is missing (a string is needed)"],
      [{ ...valid, repo: 7 }, "line 2: repo must be a string, not 7"],
      [{ ...valid, FAIL_TO_PASS: "not json" }, "line 2: FAIL_TO_PASS must be a list of test names"],
      [{ ...valid, PASS_TO_PASS: [1] }, "line 2: PASS_TO_PASS[0] must be a test name (a string)"],
      [[valid], "line 2 must be a JSON object"],
    ];
    for (const [record, message] of cases) {
      const file = await instancesFile([JSON.stringify(valid), JSON.stringify(record)]);
      await expect(readInstances(file)).rejects.toThrow(`${file} ${message}`);
    }
  });

  it("says when a line is not JSON or the file holds no instance", async () => {
    const broken = await instancesFile(["{"]);
    await expect(readInstances(broken)).rejects.toThrow(`${broken} line 1 is not JSON`);
    const empty = await instancesFile([""]);
    await expect(readInstances(empty)).rejects.toThrow(`${empty} holds no instances`);
  });
});
