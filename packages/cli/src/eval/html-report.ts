import type { EvalReport, InstanceDetails, InstanceReport } from "./report.js";

/** Text as HTML shows it, never as markup: ids, repositories and logs are the dataset's and the agent's. */
function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (character) =>
      ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[character] ?? "",
  );
}

/** The most of an instance's test output the page holds; its end is kept (summaries are last). */
const MAX_TEST_OUTPUT_CHARS = 50_000;

function percent(part: number, whole: number): string {
  return whole === 0 ? "0%" : `${((part / whole) * 100).toFixed(1).replace(/\.0$/, "")}%`;
}

/** A repository's name as the chart labels it: SWE-bench's `owner/name`, else the last folder. */
function repoLabel(repo: string): string {
  if (/^[\w.-]+\/[\w.-]+$/.test(repo)) return repo;
  const trimmed = repo.replace(/\/+$/, "").replace(/\.git$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1) || repo;
}

interface RepoCounts {
  label: string;
  resolved: number;
  unresolved: number;
  errors: number;
}

function countsByRepo(report: EvalReport, details: readonly InstanceDetails[]): RepoCounts[] {
  const byRepo = new Map<string, RepoCounts>();
  report.instances.forEach((instance, index) => {
    const label = repoLabel(details[index]?.repo ?? "");
    const counts = byRepo.get(label) ?? { label, resolved: 0, unresolved: 0, errors: 0 };
    if (instance.status === "resolved") counts.resolved += 1;
    else if (instance.status === "error") counts.errors += 1;
    else counts.unresolved += 1;
    byRepo.set(label, counts);
  });
  return [...byRepo.values()].sort((a, b) => a.label.localeCompare(b.label));
}

/** One bar per repository, split into resolved, unresolved and errors, with its counts. */
function repoChart(rows: RepoCounts[]): string {
  const rowHeight = 28;
  const labelWidth = 260;
  const barWidth = 420;
  const height = rows.length * rowHeight + 8;
  const bars = rows.map((row, index) => {
    const total = row.resolved + row.unresolved + row.errors;
    const y = index * rowHeight + 4;
    let x = labelWidth;
    const segments = (
      [
        ["resolved", row.resolved, "#2e7d32"],
        ["unresolved", row.unresolved, "#c62828"],
        ["error", row.errors, "#9e9e9e"],
      ] as const
    )
      .filter(([, count]) => count > 0)
      .map(([kind, count, colour]) => {
        const width = (count / total) * barWidth;
        const rect = `<rect class="${kind}" x="${x.toFixed(1)}" y="${y}" width="${width.toFixed(1)}" height="${rowHeight - 8}" fill="${colour}"><title>${count} ${kind}</title></rect>`;
        x += width;
        return rect;
      });
    const label = escapeHtml(row.label);
    return `<g class="repo" data-repo="${label}"><text x="0" y="${y + 15}">${label}</text>${segments.join("")}<text x="${labelWidth + barWidth + 8}" y="${y + 15}">${row.resolved}/${total} (${percent(row.resolved, total)})</text></g>`;
  });
  return `<svg id="repo-chart" role="img" aria-label="Resolved instances per repository" xmlns="http://www.w3.org/2000/svg" width="${labelWidth + barWidth + 120}" height="${height}" font-family="sans-serif" font-size="13">${bars.join("")}</svg>`;
}

function testCounts({ passed, failed }: { passed: string[]; failed: string[] }): string {
  return `${passed.length}/${passed.length + failed.length}`;
}

function instanceLog(instance: InstanceReport, details: InstanceDetails, index: number): string {
  const sections: string[] = [];
  if (instance.error !== undefined) sections.push(`error: ${instance.error}`);
  sections.push(`agent:\n${details.agentLog.join("\n") || "(did not run)"}`);
  if (details.changedFiles !== undefined) {
    sections.push(`files the agent changed:\n${details.changedFiles.join("\n") || "(none)"}`);
  }
  let output = details.testOutput ?? "(the tests did not run)";
  if (output.length > MAX_TEST_OUTPUT_CHARS) {
    const cut = output.length - MAX_TEST_OUTPUT_CHARS;
    output = `… ${cut} earlier characters cut\n${output.slice(cut)}`;
  }
  sections.push(`test output:\n${output}`);
  return `<details class="log" id="log-${index}" open><summary>${escapeHtml(instance.instance_id)}: ${instance.status}</summary><pre>${escapeHtml(sections.join("\n\n"))}</pre></details>`;
}

/**
 * The HTML report (`--html`): the resolved rate, a chart of the instances per repository (inline
 * SVG), a table of the instances and each one's log (its agent's steps, the files it changed and
 * the test output). One file: no script, no external asset, and a policy that allows neither; every
 * text from the dataset, the agent or the tests is escaped.
 */
export function htmlReport(report: EvalReport, details: readonly InstanceDetails[]): string {
  const rows = report.instances.map(
    (instance, index) =>
      `<tr class="${instance.status}"><td><a href="#log-${index}">${escapeHtml(instance.instance_id)}</a></td><td>${escapeHtml(repoLabel(details[index]?.repo ?? ""))}</td><td>${instance.status}</td><td>${testCounts(instance.FAIL_TO_PASS)}</td><td>${testCounts(instance.PASS_TO_PASS)}</td><td>${instance.agent?.steps ?? "-"}</td><td>${(instance.durationMs / 1000).toFixed(1)}s</td></tr>`,
  );
  const logs = report.instances.map((instance, index) =>
    instanceLog(instance, details[index] as InstanceDetails, index),
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>pleach eval: ${escapeHtml(report.model)}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
td, th { padding: 2px 10px; text-align: left; border-bottom: 1px solid #ddd; }
tr.resolved td:nth-child(3) { color: #2e7d32; }
tr.unresolved td:nth-child(3) { color: #c62828; }
pre { background: #f6f6f6; padding: 8px; white-space: pre-wrap; word-break: break-all; }
</style>
</head>
<body>
<h1>pleach eval: ${escapeHtml(report.model)}</h1>
<p id="resolved-rate">Resolved ${report.resolved} of ${report.total} (${percent(report.resolved, report.total)}); unresolved ${report.unresolved}, errors ${report.errors}.</p>
<h2>Per repository</h2>
${repoChart(countsByRepo(report, details))}
<h2>Instances</h2>
<table>
<thead><tr><th>instance</th><th>repository</th><th>result</th><th>FAIL_TO_PASS</th><th>PASS_TO_PASS</th><th>steps</th><th>time</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>
<h2>Logs</h2>
${logs.join("\n")}
</body>
</html>
`;
}
