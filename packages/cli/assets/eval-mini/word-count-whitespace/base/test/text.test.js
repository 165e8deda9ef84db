import assert from "node:assert/strict";
import { test } from "node:test";
import { capitalize, wordCount } from "../src/text.js";

test("wordCount counts words separated by spaces", () => {
  assert.equal(wordCount("one two three"), 3);
});

test("wordCount of an empty text is 0", () => {
  assert.equal(wordCount(""), 0);
});

test("capitalize upper-cases the first letter", () => {
  assert.equal(capitalize("pleach"), "Pleach");
});
