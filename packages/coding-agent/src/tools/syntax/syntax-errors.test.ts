import { describe, expect, it } from "vitest";
import { introducedErrors } from "./syntax-errors.js";

const error = (line: number) => ({ line, message: `e${line}` });
const numbered = (count: number) => Array.from({ length: count }, (_, index) => `l${index + 1}`);

describe("introducedErrors", () => {
  it("follows an old error below the change to its shifted line", () => {
    const before = numbered(10);
    const after = [...before.slice(0, 2), "new a", "new b", ...before.slice(2)];
    // The old error at line 8 is at line 10 now; the one at line 3 is new.
    expect(
      introducedErrors(
        { text: before.join("\n"), errors: [error(8)] },
        { text: after.join("\n"), errors: [error(3), error(10)] },
      ),
    ).toEqual([error(3)]);
  });

  it("lets an old error inside the changed lines account for one inside the new ones", () => {
    const before = numbered(6);
    const after = [...before.slice(0, 2), "x", "y", "z", ...before.slice(4)];
    expect(
      introducedErrors(
        { text: before.join("\n"), errors: [error(3)] },
        { text: after.join("\n"), errors: [error(4), error(5)] },
      ),
    ).toEqual([error(5)]);
  });

  it("blames nothing when the file has no more errors than before, wherever they are", () => {
    const before = numbered(6);
    const after = [...before.slice(0, 2), "x", ...before.slice(3)];
    expect(
      introducedErrors(
        { text: before.join("\n"), errors: [error(1)] },
        { text: after.join("\n"), errors: [error(3)] },
      ),
    ).toEqual([]);
  });

  it("blames every error of a file that was empty", () => {
    expect(
      introducedErrors({ text: "", errors: [] }, { text: "a\nb", errors: [error(1), error(2)] }),
    ).toEqual([error(1), error(2)]);
  });
});
