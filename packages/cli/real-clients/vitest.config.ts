import { defineConfig } from "vitest/config";

// The real-client suite, out of the default run: it installs agent CLIs and runs them. Like the
// root config, tests run against the TypeScript sources.
const conditions = ["@pleach/source", "node", "import", "module", "default"];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: {
    root: new URL("../../..", import.meta.url).pathname,
    include: ["packages/cli/real-clients/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 420_000,
    pool: "forks",
  },
});
