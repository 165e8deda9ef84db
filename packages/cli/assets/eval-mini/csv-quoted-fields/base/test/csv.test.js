import assert from "node:assert/strict";
import { test } from "node:test";
import { parseLine } from "../src/csv.js";

test("parseLine splits fields on commas", () => {
  assert.deepEqual(parseLine("a,b,c"), ["a", "b", "c"]);
});

test("parseLine keeps empty fields", () => {
  assert.deepEqual(parseLine("a,,c"), ["a", "", "c"]);
});
