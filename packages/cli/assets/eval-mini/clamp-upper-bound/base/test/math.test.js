import assert from "node:assert/strict";
import { test } from "node:test";
import { clamp, mean } from "../src/math.js";

test("clamp raises values below the range", () => {
  assert.equal(clamp(-5, 0, 10), 0);
});

test("clamp keeps values inside the range", () => {
  assert.equal(clamp(5, 0, 10), 5);
});

test("mean averages numbers", () => {
  assert.equal(mean([1, 2, 3]), 2);
});
