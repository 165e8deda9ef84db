import { describe, expect, it } from "vitest";
import { latestStatuses, readTestOutput } from "./parse.js";

const statusesOf = (output: string) =>
  Object.fromEntries(latestStatuses(readTestOutput(output).verdicts));

describe("readTestOutput verdicts", () => {
  it("reads each test's status from TAP and pytest lines, skips and todos included", () => {
    expect(
      statusesOf(
        [
          "ok 1 - adds numbers",
          "not ok 2 - subtracts numbers",
          "    ok 1 - nested one",
          "ok 3 - skipped one # SKIP",
          "not ok 4 - rounds # TODO later",
          "ok 5 - floors # TODO done early",
          "PASSED tests/test_a.py::test_one",
          "tests/test_a.py::test_two FAILED",
        ].join("\n"),
      ),
    ).toEqual({
      "adds numbers": "passed",
      "subtracts numbers": "failed",
      "nested one": "passed",
      "skipped one": "skipped",
      rounds: "xfail",
      floors: "xpass",
      "tests/test_a.py::test_one": "passed",
      "tests/test_a.py::test_two": "failed",
    });
  });

  it("reads node's TAP reporter: YAML diagnostics are no tests, and a later verdict wins", () => {
    expect(
      statusesOf(
        [
          "TAP version 13",
          "# Subtest: math",
          "    # Subtest: divides",
          "    not ok 1 - divides",
          "      ---",
          "      error: 'ok 9 - this is YAML, not a test point'",
          "      ...",
          "    ok 2 - adds",
          "    1..2",
          "not ok 1 - math",
          "ERROR tests/test_b.py::test_setup - fixture failed",
          "\u001b[32mok 2 - divides\u001b[39m",
          "1..2",
        ].join("\n"),
      ),
    ).toEqual({
      adds: "passed",
      divides: "passed",
      math: "failed",
      "tests/test_b.py::test_setup": "error",
    });
  });

  it("keeps pytest ids whole when their parameters hold spaces, brackets or status words", () => {
    expect(
      statusesOf(
        [
          "t.py::test_x[a b] PASSED                [ 10%]",
          "t.py::test_x[c PASSED d] SKIPPED (why not)   [ 20%]",
          "t.py::test_x[e]f g] XFAIL (known)",
          "FAILED t.py::test_x[h - i] - AssertionError: [1] != [2]",
          "XPASS t.py::test_y fixed already",
          "SKIPPED [1] t.py:9: not now",
          "test a::b ... FAILED",
        ].join("\n"),
      ),
    ).toEqual({
      "t.py::test_x[a b]": "passed",
      "t.py::test_x[c PASSED d]": "skipped",
      "t.py::test_x[e]f g]": "xfail",
      "t.py::test_x[h - i]": "failed",
      "t.py::test_y": "xpass",
      "a::b": "failed",
    });
  });
});
