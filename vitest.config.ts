import { defineConfig } from "vitest/config";

// Tests run against the TypeScript sources: the "@pleach/source" export condition points each
// workspace package at its src/ so a test never depends on a stale build.
const conditions = ["@pleach/source", "node", "import", "module", "default"];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    // Tests that need Node 22 run under vitest.node22.config.ts.
    exclude: ["**/node_modules/**", "**/*.node22.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The kept caches of the suite's many temporary workspaces go to a temporary folder, not the
    // caches of the user running it (the tests that look at them choose their own); not in /tmp,
    // which is the sandbox's own (a warm sandbox's /tmp is checked to hold only the workspace).
    env: { XDG_CACHE_HOME: `/var/tmp/pleach-test-caches-${process.getuid?.() ?? 0}` },
  },
});
