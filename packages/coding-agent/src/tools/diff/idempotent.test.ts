import { createPatch } from "diff";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyFilePatch } from "./apply.js";
import { parseUnifiedDiff } from "./parse.js";

/** A Python test module: `count` small test functions, two blank lines apart. */
function testModule(count: number, prefix: string): string[] {
  const lines: string[] = ["import pytest", ""];
  for (let index = 0; index < count; index += 1) {
    lines.push("", `def test_${prefix}_${index}():`, `    result = run("${prefix} ${index}")`);
    lines.push(`    assert result.exit_code == 0`);
  }
  return lines;
}

/** Two added test functions of 77 lines in all, ending like the functions around them. */
function addedTests(): string[] {
  const lines: string[] = [];
  for (const name of ["isolation_stderr", "isolation_stdout"]) {
    lines.push("", "", `def test_${name}(runner):`);
    for (let index = 0; index < 34; index += 1) lines.push(`    runner.invoke(cli, ["${index}"])`);
    lines.push("    assert result.exit_code == 0");
  }
  return lines.slice(0, 77);
}

/** Apply every file diff of `diff` to `files`; what each file became and every hunk's status. */
function applyAll(files: Map<string, string>, diff: string) {
  const result = new Map(files);
  const statuses: string[] = [];
  for (const patch of parseUnifiedDiff(diff)) {
    const name = (patch.newPath ?? patch.oldPath ?? "").replace(/^b\//, "");
    const applied = applyFilePatch(result.get(name), patch);
    statuses.push(...applied.hunks.map((hunk) => `${name}#${hunk.hunk}:${hunk.status}`));
    if (applied.conflicts.length === 0 && applied.text !== null) result.set(name, applied.text);
  }
  return { files: result, statuses };
}

describe("a diff applied twice", () => {
  it("changes nothing the second time, where an outer context line lined up with added lines", () => {
    // The shape of pallets/click c2ed4149 sent twice: ten files, and in one a hunk adding two test
    // functions whose outer context line, left out, let the rest line up 79 lines further down.
    const before = new Map<string, string>();
    const after = new Map<string, string>();
    for (let file = 0; file < 10; file += 1) {
      const old = testModule(40, `f${file}`);
      const changed = [...old];
      if (file === 7) changed.splice(2 + 4 * 20, 0, ...addedTests());
      else changed.splice(2 + 4 * 10 + 3, 1, `    assert result.exit_code == ${file}`);
      before.set(`tests/test_${file}.py`, `${old.join("\n")}\n`);
      after.set(`tests/test_${file}.py`, `${changed.join("\n")}\n`);
    }
    const diff = [...before.keys()]
      .map((name) =>
        createPatch(name, before.get(name) ?? "", after.get(name) ?? "").replace(
          /^Index: .*\n=+\n--- (.*)\n\+\+\+ (.*)\n/,
          "--- a/$1\n+++ b/$2\n",
        ),
      )
      .join("");

    const first = applyAll(before, diff);
    expect(first.files).toEqual(after);
    const second = applyAll(first.files, diff);
    expect(second.files).toEqual(after);
    expect(second.statuses.every((status) => status.endsWith(":already-applied"))).toBe(true);
  });

  it("is a no-op for any generated diff that applied", () => {
    const content = fc.constantFrom("", "", "a", "b", "}", "  return x;", "def f():", "    pass");
    fc.assert(
      fc.property(
        fc.array(content, { maxLength: 30 }),
        fc.array(
          fc.record({
            action: fc.constantFrom("keep", "keep", "keep", "drop", "replace"),
            insert: fc.array(content, { maxLength: 4 }),
            replacement: content,
          }),
          { minLength: 31, maxLength: 31 },
        ),
        (lines, steps) => {
          const changed: string[] = [];
          lines.forEach((line, index) => {
            const step = steps[index];
            changed.push(...(step?.insert ?? []));
            if (step?.action === "keep") changed.push(line);
            else if (step?.action === "replace") changed.push(step.replacement);
          });
          changed.push(...(steps[lines.length]?.insert ?? []));
          const old = lines.length === 0 ? "" : `${lines.join("\n")}\n`;
          const wanted = changed.length === 0 ? "" : `${changed.join("\n")}\n`;
          const [patch] = parseUnifiedDiff(createPatch("f", old, wanted));
          if (patch === undefined || patch.hunks.length === 0) return;
          const once = applyFilePatch(old, patch);
          if (once.conflicts.length > 0 || once.text === null) return;
          const twice = applyFilePatch(once.text, patch);
          // A conflict leaves the file as it is too; what must never happen is a change.
          const result = twice.conflicts.length > 0 ? once.text : twice.text;
          expect(result).toBe(once.text);
        },
      ),
      { numRuns: 3000, seed: 31 },
    );
  });
});

describe("a hunk with no context lines sent twice", () => {
  const once = (text: string, diff: string) => {
    const [patch] = parseUnifiedDiff(diff);
    if (patch === undefined) throw new Error("no patch");
    return applyFilePatch(text, patch);
  };

  it.each([
    ["at the top of a file", "b\nc\n", "--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+a\n", "a\nb\nc\n"],
    [
      "at the end of a file",
      "a\nb\n",
      "--- a/f\n+++ b/f\n@@ -2,0 +3,2 @@\n+c\n+d\n",
      "a\nb\nc\nd\n",
    ],
    ["in the middle", "a\nd\n", "--- a/f\n+++ b/f\n@@ -1,0 +2,2 @@\n+b\n+c\n", "a\nb\nc\nd\n"],
  ])("%s: applied once, refused the second time, the file unchanged", (_, text, diff, wanted) => {
    const first = once(text, diff);
    expect(first.conflicts).toEqual([]);
    expect(first.text).toBe(wanted);
    const second = once(wanted, diff);
    expect(second.conflicts).toHaveLength(1);
    expect(second.conflicts[0]).toMatch(/no context lines .* may be applied already/);
    expect(second.hunks.map((hunk) => hunk.status)).toEqual(["conflict"]);
  });

  it("with zero context (diff -U0), a diff applied twice never changes the file", () => {
    const line = fc.constantFrom("a", "b", "c", "d", "e", "");
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 12 }),
        fc.array(line, { maxLength: 12 }),
        (left, right) => {
          const old = left.length === 0 ? "" : `${left.join("\n")}\n`;
          const wanted = right.length === 0 ? "" : `${right.join("\n")}\n`;
          const [patch] = parseUnifiedDiff(createPatch("f", old, wanted, "", "", { context: 0 }));
          if (patch === undefined || patch.hunks.length === 0) return;
          // Made from this very file, its line numbers are right: it applies whole.
          const first = applyFilePatch(old, patch);
          expect(first.conflicts).toEqual([]);
          expect(first.text).toBe(wanted);
          if (first.text === null) return;
          const second = applyFilePatch(first.text, patch);
          expect(second.conflicts.length > 0 ? first.text : second.text).toBe(first.text);
        },
      ),
      { numRuns: 3000, seed: 32 },
    );
  });
});
