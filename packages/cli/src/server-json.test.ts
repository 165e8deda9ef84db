// The MCP Registry entry (packages/cli/server.json): consistent with the package it points at, and
// valid against the registry's own JSON Schema, fetched from the `$schema` URL at test time (no
// copy of it is kept here).
import { readFile } from "node:fs/promises";
import path from "node:path";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";

const cli = path.resolve(import.meta.dirname, "..");
const SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

interface ServerJson {
  $schema: string;
  name: string;
  description: string;
  version: string;
  packages: Array<{ registryType: string; identifier: string; version: string }>;
}

async function load() {
  const server = JSON.parse(await readFile(path.join(cli, "server.json"), "utf8")) as ServerJson;
  const manifest = JSON.parse(await readFile(path.join(cli, "package.json"), "utf8")) as {
    name: string;
    version: string;
    mcpName: string;
  };
  return { server, manifest };
}

describe("server.json", () => {
  it("names the package and version it describes, as the registry requires of an npm server", async () => {
    const { server, manifest } = await load();
    expect(server.$schema).toBe(SCHEMA_URL);
    // The registry proves ownership by the package's mcpName matching the entry's name.
    expect(server.name).toBe(manifest.mcpName);
    expect(server.version).toBe(manifest.version);
    expect(server.packages).toEqual([
      expect.objectContaining({
        registryType: "npm",
        identifier: manifest.name,
        version: manifest.version,
      }),
    ]);
    // The official registry's limit on the description.
    expect(server.description.length).toBeLessThanOrEqual(100);
  });

  it("is valid against the registry's JSON Schema", async (context) => {
    let schema: Record<string, unknown>;
    try {
      const response = await fetch(SCHEMA_URL, { signal: AbortSignal.timeout(10_000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      schema = (await response.json()) as Record<string, unknown>;
    } catch (error) {
      // No npm package ships the schema to validate against offline (checked 2026-12-02):
      // @modelcontextprotocol/registry and mcp-publisher are not on npm (the publisher is a Go
      // binary from GitHub releases), and @modelcontextprotocol/sdk, @modelcontextprotocol/
      // inspector 2.12.0 and the conformance suites 0.1.16 and 0.2.0-alpha.12 hold no
      // server.schema.json.
      context.skip(
        `the registry's schema could not be fetched from ${SCHEMA_URL} (${error}), and no npm package ships it`,
      );
      return;
    }
    const { server } = await load();
    // The schema names its own draft in `$schema`; Ajv's default draft-07 core checks the rest.
    const { $schema: _draft, ...rest } = schema;
    const ajv = new Ajv.default({ allErrors: true, strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(rest);
    const valid = validate(server);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });
});
