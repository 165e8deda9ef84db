import os from "node:os";
import { isToolError } from "@pleach/core";
import { describe, expect, it } from "vitest";
import { createRequestOriginCheck, parseAllowedHost } from "./request-origin.js";

describe("createRequestOriginCheck", () => {
  const check = createRequestOriginCheck();

  it("accepts loopback hosts with any port or none, and no Origin", () => {
    for (const host of [
      "localhost",
      "localhost:8931",
      "LocalHost.:80",
      "127.0.0.1",
      "127.0.0.1:1",
      "127.12.34.56:65535",
      "[::1]",
      "[::1]:8700",
      "[0:0:0:0:0:0:0:1]:8700",
    ]) {
      expect(check({ host }), host).toBeUndefined();
    }
  });

  it("accepts loopback origins of any scheme and port", () => {
    for (const origin of [
      "http://localhost:3000",
      "https://localhost",
      "http://127.0.0.1:8931",
      "http://127.99.0.1",
      "http://[::1]:5173",
    ]) {
      expect(check({ host: "localhost:8931", origin }), origin).toBeUndefined();
    }
  });

  it("refuses a foreign Host, naming it and the flag that would accept it", () => {
    const refusal = check({ host: "evil.example.com:8931" });
    expect(refusal).toMatchObject({
      header: "Host",
      value: "evil.example.com:8931",
      host: "evil.example.com",
      allowWith: "--allow-host evil.example.com",
    });
    expect(refusal?.message).toMatch(/^refused Host "evil\.example\.com:8931"/);
    expect(refusal?.message).toMatch(/DNS rebinding/);
    expect(refusal?.message).toMatch(/start the server with --allow-host evil\.example\.com$/);
  });

  it("refuses names and addresses that only look like loopback", () => {
    for (const host of [
      "localhost.evil.example.com",
      "127.0.0.1.nip.io",
      "evil-localhost",
      "128.0.0.1",
      "[::2]",
      "0.0.0.0",
      "10.0.0.5:8700",
    ]) {
      expect(check({ host })?.header, host).toBe("Host");
    }
  });

  it("refuses a malformed or missing Host without offering to allow it", () => {
    for (const host of [
      "",
      "localhost@evil.example.com",
      "evil.example.com/localhost",
      "localhost:80:80",
      "local host",
      "[::1",
      "::1",
    ]) {
      const refusal = check({ host });
      expect(refusal?.header, host).toBe("Host");
      expect(refusal?.allowWith, host).toBeUndefined();
    }
    expect(check({})).toMatchObject({ header: "Host", value: undefined });
    expect(check({})?.message).toMatch(/without a Host header/);
  });

  it("refuses a foreign Origin even with a loopback Host", () => {
    const refusal = check({ host: "127.0.0.1:8931", origin: "http://evil.example.com" });
    expect(refusal).toMatchObject({
      header: "Origin",
      value: "http://evil.example.com",
      host: "evil.example.com",
      allowWith: "--allow-host evil.example.com",
    });
    expect(refusal?.message).toMatch(/a browser page from evil\.example\.com may not call/);
    for (const origin of ["null", "file://", "not a url", "http://a, http://b"]) {
      const opaque = check({ host: "localhost", origin });
      expect(opaque?.header, origin).toBe("Origin");
      expect(opaque?.allowWith, origin).toBeUndefined();
    }
  });

  it("accepts the allowed hosts, exactly or as a domain, in Host and Origin", () => {
    const allowing = createRequestOriginCheck({
      allowedHosts: ["sandbox.internal", ".example.com", "10.0.0.5", "fd00::5"],
      flag: "--let-in",
    });
    for (const host of [
      "sandbox.internal:8700",
      "SANDBOX.internal",
      "example.com",
      "a.b.example.com:443",
      "10.0.0.5",
      "[fd00::5]:8700",
    ]) {
      expect(allowing({ host }), host).toBeUndefined();
      expect(allowing({ host: "localhost", origin: `https://${host}` }), host).toBeUndefined();
    }
    expect(allowing({ host: "badexample.com" })?.allowWith).toBe("--let-in badexample.com");
    expect(allowing({ host: "sandbox.internal.evil" })?.header).toBe("Host");
  });

  it("accepts the address it listens on, and every address of the machine for a wildcard", () => {
    const specific = createRequestOriginCheck({ listenAddresses: ["10.1.2.3", "10.1.2.3"] });
    expect(specific({ host: "10.1.2.3:8700" })).toBeUndefined();
    expect(specific({ host: "10.1.2.4:8700" })?.header).toBe("Host");
    const named = createRequestOriginCheck({ listenAddresses: ["box.lan", "10.9.9.9"] });
    expect(named({ host: "box.lan:8700" })).toBeUndefined();
    expect(named({ host: "10.9.9.9:8700" })).toBeUndefined();

    const machine = [os.hostname()];
    for (const addresses of Object.values(os.networkInterfaces())) {
      for (const { address, family } of addresses ?? []) {
        if (!address.includes("%")) machine.push(family === "IPv6" ? `[${address}]` : address);
      }
    }
    for (const wildcard of ["0.0.0.0", "::", "[::]"]) {
      const everywhere = createRequestOriginCheck({ listenAddresses: [wildcard] });
      for (const host of machine) {
        expect(everywhere({ host: `${host}:8700` }), `${wildcard} ${host}`).toBeUndefined();
      }
      expect(everywhere({ host: "evil.example.com" })?.header).toBe("Host");
      expect(everywhere({ host: "203.0.113.9" })?.header).toBe("Host");
    }
  });
});

describe("parseAllowedHost", () => {
  it("keeps names, addresses and domains in the form requests are compared with", () => {
    expect(parseAllowedHost(" Sandbox.Internal ")).toBe("sandbox.internal");
    expect(parseAllowedHost(".Example.com")).toBe(".example.com");
    expect(parseAllowedHost("fd00::5")).toBe("[fd00::5]");
    expect(parseAllowedHost("[FD00:0::5]")).toBe("[fd00::5]");
    expect(parseAllowedHost("10.0.0.5")).toBe("10.0.0.5");
  });

  it("refuses a port, a scheme, a path, a wildcard or an empty name, saying why", () => {
    const reasons: Record<string, RegExp> = {
      "example.com:8080": /without a port/,
      "[fd00::5]:8700": /without a port/,
      "http://example.com": /without a scheme or path/,
      "example.com/mcp": /without a scheme or path/,
      "*": /host name or address/,
      "": /host name or address/,
      ".10.0.0.5": /not a valid host/,
    };
    for (const [entry, reason] of Object.entries(reasons)) {
      let thrown: unknown;
      try {
        parseAllowedHost(entry);
      } catch (error) {
        thrown = error;
      }
      expect(isToolError(thrown) && thrown.code, entry).toBe("INVALID_INPUT");
      expect((thrown as Error).message, entry).toMatch(reason);
    }
    expect(() => createRequestOriginCheck({ allowedHosts: ["a:1"] })).toThrow(/without a port/);
  });
});
