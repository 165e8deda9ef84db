import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/slugify.js";

test("slugify lower-cases words and joins them with dashes", () => {
  assert.equal(slugify("Hello World"), "hello-world");
});

test("slugify trims the title", () => {
  assert.equal(slugify("  Trim me "), "trim-me");
});
