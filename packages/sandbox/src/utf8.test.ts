import { describe, expect, it } from "vitest";
import { decodeUtf8 } from "./utf8.js";

/** A small deterministic generator, so a failure can be replayed from its seed. */
function random(seed: number) {
  let state = seed;
  return (below: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state % below;
  };
}

/** Characters from every UTF-8 length, with the edges that decoders get wrong. */
const CHARACTERS = [
  "a",
  "\n",
  "\0",
  "\u007f",
  "\u0080",
  "é",
  "\u07ff",
  "\u0800",
  "中",
  "\ufeff",
  "\ufffd",
  "\uffff",
  "\ud7ff",
  "\ue000",
  "🙂",
  "\u{10ffff}",
  "\u{10000}",
];

describe("decodeUtf8", () => {
  it("reads valid UTF-8 exactly as Node's decoder does, at any size", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const length = next(seed % 10 === 0 ? 20_000 : 200);
      let text = "";
      for (let index = 0; index < length; index++) {
        text += CHARACTERS[next(CHARACTERS.length)];
      }
      const bytes = Buffer.from(text, "utf8");
      expect(decodeUtf8(bytes)).toBe(text);
      expect(decodeUtf8(bytes)).toBe(bytes.toString("utf8"));
    }
  });

  it("replaces invalid UTF-8 exactly as Node's decoder does", () => {
    const cases = [
      "ff",
      "00ff41",
      "c0af",
      "e08080",
      "eda080",
      "f4908080",
      "e282",
      "41e2",
      "f09f99",
      "80808041",
      "efbbbfff",
    ].map((hex) => Buffer.from(hex, "hex"));
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      cases.push(Buffer.from(Array.from({ length: next(64) }, () => next(256))));
      // Mostly valid text with one byte broken somewhere.
      const valid = Buffer.from("héllo 中文 🙂 wörld ".repeat(1 + next(20)), "utf8");
      valid[next(valid.length)] = next(256);
      cases.push(valid);
    }
    for (const bytes of cases) {
      expect(decodeUtf8(bytes)).toBe(bytes.toString("utf8"));
    }
  });

  it("reads an empty buffer and pure ASCII as themselves", () => {
    expect(decodeUtf8(Buffer.alloc(0))).toBe("");
    expect(decodeUtf8(Buffer.from("plain\tascii\r\n"))).toBe("plain\tascii\r\n");
  });
});
