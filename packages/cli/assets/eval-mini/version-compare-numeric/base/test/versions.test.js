import assert from "node:assert/strict";
import { test } from "node:test";
import { compareVersions, latest } from "../src/versions.js";

test("compareVersions orders single-digit parts", () => {
  assert.equal(compareVersions("1.2.3", "1.3.0"), -1);
});

test("compareVersions treats missing parts as zero", () => {
  assert.equal(compareVersions("1.2", "1.2.0"), 0);
});

test("latest picks the highest version", () => {
  assert.equal(latest(["0.1.0", "0.3.0", "0.2.0"]), "0.3.0");
});
