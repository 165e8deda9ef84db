import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { showControlCharacters } from "./control-characters.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

describe("showControlCharacters", () => {
  it("shows terminal escapes and carriage returns as text", () => {
    const hostile = "id\x1b]52;c;cHduZWQ=\x07 \x1b]0;title\x1b\\ \x1b[2K\rover \x9b31m\x7f";
    expect(showControlCharacters(hostile)).toBe(
      "id\\u001b]52;c;cHduZWQ=\\u0007 \\u001b]0;title\\u001b\\ \\u001b[2K\\rover \\u009b31m\\u007f",
    );
    expect(showControlCharacters("a\tb\r\nc\nd\re")).toBe("a\\tb\\r\\nc\\nd\\re");
    expect(showControlCharacters("a\tb\r\nc\nd\re", { multiline: true })).toBe("a\tb\r\nc\nd\\re");
  });

  it("leaves no control character but kept line breaks and tabs, and keeps JSON valid", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.boolean(), (text, multiline) => {
        const shown = showControlCharacters(text, { multiline });
        const rest = multiline ? shown.replace(/\r\n|\n|\t/g, "") : shown;
        expect(CONTROL.test(rest)).toBe(false);
        const json = JSON.stringify({ text }, null, 2);
        expect(JSON.parse(showControlCharacters(json, { multiline: true }))).toEqual({ text });
      }),
    );
  });
});
