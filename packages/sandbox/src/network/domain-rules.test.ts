import { describe, expect, it } from "vitest";
import {
  allowsEveryDomain,
  type DomainRules,
  decideDomain,
  everyDomain,
  namesAddress,
  parseDomainPattern,
  parseHostPort,
  parseNetworkOption,
} from "./domain-rules.js";

function rules(allowDomains: string[], denyDomains: string[] = []): DomainRules {
  return parseNetworkOption({ allowDomains, denyDomains }) as DomainRules;
}

function allowed(list: DomainRules, authority: string, port = 443): boolean {
  const target = parseHostPort(authority);
  if (target === undefined) throw new Error(`not a host: ${authority}`);
  return decideDomain(list, target.host, target.port ?? port).allowed;
}

describe("domain patterns", () => {
  it("matches a name exactly, at any port unless one is given", () => {
    const list = rules(["registry.npmjs.org", "example.com:8443"]);
    expect(allowed(list, "registry.npmjs.org")).toBe(true);
    expect(allowed(list, "registry.npmjs.org", 22)).toBe(true);
    expect(allowed(list, "npmjs.org")).toBe(false);
    expect(allowed(list, "evil-registry.npmjs.org")).toBe(false);
    expect(allowed(list, "registry.npmjs.org.evil.example")).toBe(false);
    expect(allowed(list, "example.com:8443")).toBe(true);
    expect(allowed(list, "example.com:443")).toBe(false);
  });

  it("matches every name below a *. domain, not the domain itself", () => {
    const list = rules(["*.github.com"]);
    expect(allowed(list, "api.github.com")).toBe(true);
    expect(allowed(list, "a.b.github.com")).toBe(true);
    expect(allowed(list, "github.com")).toBe(false);
    expect(allowed(list, "evilgithub.com")).toBe(false);
    expect(allowed(list, "github.com.evil.example")).toBe(false);
  });

  it("lets a denied pattern win over an allowed one, at its port only when it names one", () => {
    const list = rules(["*.example.com", "example.com"], ["secret.example.com", "example.com:80"]);
    expect(allowed(list, "www.example.com")).toBe(true);
    expect(allowed(list, "secret.example.com")).toBe(false);
    expect(decideDomain(list, "secret.example.com", 443)).toMatchObject({
      allowed: false,
      rule: "denied",
      pattern: { text: "secret.example.com" },
    });
    expect(allowed(list, "example.com", 80)).toBe(false);
    expect(allowed(list, "example.com", 443)).toBe(true);
  });

  it("reads upper case, a trailing dot and international names as the same host", () => {
    const list = rules(["Registry.NPMjs.org.", "bücher.example"]);
    expect(list.allow.map(({ text }) => text)).toEqual([
      "registry.npmjs.org",
      "xn--bcher-kva.example",
    ]);
    expect(allowed(list, "REGISTRY.npmjs.ORG.")).toBe(true);
    expect(allowed(list, "BÜCHER.example")).toBe(true);
    expect(allowed(list, "xn--bcher-kva.example")).toBe(true);
  });

  it("matches IP literals by address, in any spelling, and never through a wildcard", () => {
    const list = rules(["10.0.0.5", "[fd00::1]:8080"]);
    expect(allowed(list, "10.0.0.5")).toBe(true);
    expect(allowed(list, "0x0a.0.0.5")).toBe(true);
    expect(allowed(list, "[FD00:0:0::1]:8080")).toBe(true);
    expect(allowed(list, "[fd00::1]:8081")).toBe(false);
    expect(allowed(list, "10.0.0.6")).toBe(false);
    expect(() => parseDomainPattern("*.10.0.0.5")).toThrow(/not a domain pattern/);
    expect(namesAddress(list, "10.0.0.5", 443)).toBe(true);
    expect(namesAddress(list, "fd00::1", 8080)).toBe(true);
    expect(namesAddress(list, "fd00::1", 443)).toBe(false);
    expect(namesAddress(rules(["*.internal"]), "10.0.0.5", 443)).toBe(false);
  });

  it("matches every name and address at every port with *, the rules of the whole network", () => {
    const rules = parseNetworkOption({ allowDomains: ["*"] }) as DomainRules;
    expect(rules).toEqual(everyDomain());
    expect(allowsEveryDomain(rules)).toBe(true);
    for (const [host, port] of [
      ["example.com", 443],
      ["a.b.example.org", 22],
      ["10.0.0.5", 80],
    ] as const) {
      expect(decideDomain(rules, host, port)).toMatchObject({ allowed: true });
    }
    // An address still needs a rule of its own to pass the proxy's check of special addresses.
    expect(namesAddress(rules, "127.0.0.1", 80)).toBe(false);
    const narrowed = parseNetworkOption({ allowDomains: ["*"], denyDomains: ["*.internal"] });
    expect(decideDomain(narrowed as DomainRules, "db.internal", 5432)).toMatchObject({
      allowed: false,
    });
    expect(
      allowsEveryDomain(parseNetworkOption({ allowDomains: ["*.example.com"] }) as DomainRules),
    ).toBe(false);
  });

  it("refuses a bad pattern with INVALID_INPUT naming it and the accepted forms", () => {
    for (const bad of [
      "",
      "*:443",
      "*.",
      "https://example.com",
      "example.com/path",
      "user@example.com",
      "example.com:0",
      "example.com:65536",
      "example.com:http",
      "exa mple.com",
      "a..b",
      "-bad.example",
      "[fd00::1",
      "*.*.example.com",
    ]) {
      let error: unknown;
      try {
        parseDomainPattern(bad);
      } catch (caught) {
        error = caught;
      }
      expect(error, bad).toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining(
          `${JSON.stringify(bad)} is not a domain pattern; use a host name`,
        ),
      });
    }
  });

  it("reads the option's forms, refusing anything else", () => {
    expect(parseNetworkOption(false)).toBe(false);
    expect(parseNetworkOption(true)).toBe(true);
    expect(parseNetworkOption({ allowDomains: ["example.com"] })).toEqual({
      allow: [{ text: "example.com", host: "example.com", wildcard: false }],
      deny: [],
    });
    expect(() => parseNetworkOption("example.com")).toThrow(/network must be true, false, or/);
    expect(() => parseNetworkOption({ allowDomain: ["x.com"] })).toThrow(
      /unknown keys allowDomain/,
    );
    expect(() => parseNetworkOption({ allowDomains: "x.com" })).toThrow(
      /allowDomains must be an array/,
    );
  });
});
