import { describe, expect, it } from "vitest";
import { createBearerTokenCheck } from "./bearer-token.js";

describe("createBearerTokenCheck", () => {
  const check = createBearerTokenCheck("s3cret-token-value");

  it("accepts the token after Bearer, in any case of the scheme", () => {
    expect(check("Bearer s3cret-token-value")).toBe(true);
    expect(check("bearer   s3cret-token-value  ")).toBe(true);
  });

  it("refuses anything else", () => {
    for (const header of [
      undefined,
      "",
      "Bearer",
      "Bearer ",
      "Bearer s3cret-token-valu",
      "Bearer s3cret-token-value2",
      "Bearer s3cret-token-value extra",
      "Basic s3cret-token-value",
      "s3cret-token-value",
    ]) {
      expect([header, check(header)]).toEqual([header, false]);
    }
  });

  it("needs a token", () => {
    expect(() => createBearerTokenCheck("")).toThrow(TypeError);
  });
});
