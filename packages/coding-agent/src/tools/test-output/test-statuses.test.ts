import { describe, expect, it } from "vitest";
import { parseTestStatuses } from "./test-statuses.js";

describe("parseTestStatuses", () => {
  it("reads test names from TAP and pytest output", () => {
    const statuses = parseTestStatuses(
      [
        "ok 1 - adds numbers",
        "not ok 2 - subtracts numbers",
        "    ok 1 - nested one",
        "ok 3 - skipped one # SKIP",
        "PASSED tests/test_a.py::test_one",
        "tests/test_a.py::test_two FAILED",
      ].join("\n"),
    );
    expect(Object.fromEntries(statuses)).toEqual({
      "adds numbers": "pass",
      "subtracts numbers": "fail",
      "nested one": "pass",
      "tests/test_a.py::test_one": "pass",
      "tests/test_a.py::test_two": "fail",
    });
  });

  it("reads node's TAP reporter: subtests, YAML diagnostics, todo, and a later verdict winning", () => {
    const statuses = parseTestStatuses(
      [
        "TAP version 13",
        "# Subtest: math",
        "    # Subtest: divides",
        "    not ok 1 - divides",
        "      ---",
        "      error: 'ok 9 - this is YAML, not a test point'",
        "      ...",
        "    ok 2 - adds",
        "    not ok 3 - rounds # TODO later",
        "    1..3",
        "not ok 1 - math",
        "ERROR tests/test_b.py::test_setup - fixture failed",
        "\u001b[32mok 2 - divides\u001b[39m",
        "1..2",
      ].join("\n"),
    );
    expect(Object.fromEntries(statuses)).toEqual({
      adds: "pass",
      divides: "pass",
      math: "fail",
      "tests/test_b.py::test_setup": "fail",
    });
  });
});
