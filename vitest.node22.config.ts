import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// The adapter tests that need Node 22 (ai@7, Mastra), run by `.ci/run` under the npm `node@22`
// package: `bash scripts/with-node.sh 22.23.3 npx vitest run --config vitest.node22.config.ts`.
// `ai` is the ai@7 install (`ai-v7`, an npm alias), so ai-sdk.test.ts runs here against ai@7.
export default defineConfig({
  ...base,
  resolve: { ...base.resolve, alias: [{ find: /^ai(\/.*)?$/, replacement: "ai-v7$1" }] },
  test: {
    ...base.test,
    include: ["packages/core/src/adapters/ai-sdk.test.ts", "packages/*/src/**/*.node22.test.ts"],
    exclude: ["**/node_modules/**"],
  },
});
