// The HTML report as a browser shows it: `pleach eval --html` over the mini dataset, one of whose
// test commands prints a <script>, opened in headless Chromium (Debian's package `chromium`). Skips,
// saying why, where Chromium is not installed.
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { runCli } from "../test-support/run-cli.js";
import { buildMiniDataset, sandboxVisibleTempParent } from "./mini-dataset.js";

const chromium = ["chromium", "chromium-browser"].find(
  (name) => spawnSync(name, ["--version"], { encoding: "utf8" }).status === 0,
);

/** The page's DOM once Chromium has loaded it. */
function dumpDom(file: string): string {
  const result = spawnSync(
    chromium as string,
    ["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", pathToFileURL(file).href],
    { encoding: "utf8", timeout: 120_000 },
  );
  if (result.status !== 0) throw new Error(`chromium failed: ${result.stderr}`);
  return result.stdout;
}

describe.skipIf(chromium === undefined)("pleach eval --html", () => {
  it("shows the resolved rate, the chart per repository and each log, a <script> in it as text", async () => {
    const directory = await useTempDir({
      prefix: "pleach-eval-html-",
      parent: await sandboxVisibleTempParent(),
    });
    const file = await buildMiniDataset({ directory });
    const hostile = '<script>document.body.setAttribute("data-ran", "yes")</script>';
    const lines = (await readFile(file, "utf8")).trim().split("\n");
    const first = JSON.parse(lines[0] as string);
    first.test_command = `${first.test_command}; echo '${hostile}'`;
    lines[0] = JSON.stringify(first);
    await writeFile(file, `${lines.join("\n")}\n`);
    const html = path.join(directory, "report.html");
    const { code } = await runCli(["eval", file, "--model", "gold", "--html", html]);
    expect(code).toBe(0);

    const dom = dumpDom(html);
    expect(dom).toContain("Resolved 5 of 5 (100%)");
    const chart = /<svg id="repo-chart"[\s\S]*?<\/svg>/.exec(dom)?.[0] ?? "";
    expect(chart.match(/<g class="repo"/g)).toHaveLength(5);
    expect(chart).toContain('data-repo="clamp-upper-bound"');
    expect(chart.match(/<rect class="resolved"/g)).toHaveLength(5);
    const log = /<details class="log" id="log-0" open="">([\s\S]*?)<\/details>/.exec(dom)?.[1];
    expect(log).toContain(`${first.instance_id}: resolved`);
    expect(log).toContain("→ apply_diff");
    expect(log).toContain("ok 1 - clamp");
    // The script is text in the log: escaped, never an element, never run.
    expect(log).toContain("&lt;script&gt;document.body.setAttribute");
    expect(dom).not.toMatch(/<script/i);
    expect(dom).not.toContain('data-ran="yes"');
  }, 240_000);
});

if (chromium === undefined) {
  describe("pleach eval --html", () => {
    it.skip("skipped: Chromium is not installed (apt-get install chromium)", () => {});
  });
}
