import { showControlCharacters } from "@pleach/coding-agent/tools";
import type { TestListOutcome } from "./grading.js";
import type { SweBenchStatus } from "./swe-bench.js";

/** What happened to one instance. */
export interface InstanceReport {
  instance_id: string;
  resolved: boolean;
  /**
   * `error`: the harness could not evaluate it (clone, checkout or test patch failed, the tests
   * timed out, or their output named no test).
   */
  status: "resolved" | "unresolved" | "error";
  FAIL_TO_PASS: TestListOutcome;
  PASS_TO_PASS: TestListOutcome;
  /** Each test's status as SWE-bench records it, when the tests ran (see `Grade`). */
  statuses?: Record<string, SweBenchStatus>;
  agent?: { stopReason: string; steps: number; toolCalls: number; totalTokens: number };
  error?: string;
  durationMs: number;
}

/** What the reports beyond the JSON one show of an instance: its log, and what its grade rests on. */
export interface InstanceDetails {
  /** The instance's `repo`, as the dataset gives it. */
  repo: string;
  /** The files the agent changed (absent when it did not get to finish). */
  changedFiles?: string[];
  /** Whether the test patch applied and the test command ran. */
  testsRan: boolean;
  /** The agent's steps, a line per event as `pleach demo` prints them. */
  agentLog: string[];
  /** The test command's stdout, then its stderr. */
  testOutput?: string;
}

/** The whole evaluation. */
export interface EvalReport {
  model: string;
  total: number;
  resolved: number;
  unresolved: number;
  errors: number;
  resolvedRate: number;
  instances: InstanceReport[];
}

/** Sums the instances' reports up. */
export function summarizeReports(model: string, instances: InstanceReport[]): EvalReport {
  const resolved = instances.filter((report) => report.status === "resolved").length;
  const errors = instances.filter((report) => report.status === "error").length;
  return {
    model,
    total: instances.length,
    resolved,
    unresolved: instances.length - resolved - errors,
    errors,
    resolvedRate: instances.length === 0 ? 0 : resolved / instances.length,
    instances,
  };
}

/** A duration as the table and the progress lines show it: `12.3s`. */
function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(1)}s`;
}

/**
 * The report as a table a person reads. Ids and errors come from the dataset and the repository,
 * so their control characters are made visible.
 */
export function formatEvalTable(report: EvalReport): string {
  const rows = report.instances.map((instance) => {
    const f2p = instance.FAIL_TO_PASS;
    const p2p = instance.PASS_TO_PASS;
    return [
      showControlCharacters(instance.instance_id),
      instance.status,
      `${f2p.passed.length}/${f2p.passed.length + f2p.failed.length}`,
      `${p2p.passed.length}/${p2p.passed.length + p2p.failed.length}`,
      instance.agent === undefined ? "-" : String(instance.agent.steps),
      seconds(instance.durationMs),
    ];
  });
  const header = ["instance", "result", "FAIL_TO_PASS", "PASS_TO_PASS", "steps", "time"];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const format = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  const errors = report.instances
    .filter((instance) => instance.error !== undefined)
    .map(
      (instance) =>
        `  ${showControlCharacters(instance.instance_id)}: ${showControlCharacters(instance.error ?? "", { multiline: true })}`,
    );
  const percent = (report.resolvedRate * 100).toFixed(1).replace(/\.0$/, "");
  return [
    format(header),
    ...rows.map(format),
    "",
    `model ${report.model}: resolved ${report.resolved} of ${report.total} (${percent}%), unresolved ${report.unresolved}, errors ${report.errors}`,
    ...(errors.length > 0 ? ["", "errors:", ...errors] : []),
    "",
  ].join("\n");
}

/** One progress line for stderr: `[3/5] id: resolved in 4.2s — 2 resolved so far`. */
export function formatProgressLine({
  report,
  finished,
  total,
  resolvedSoFar,
}: {
  report: InstanceReport;
  finished: number;
  total: number;
  resolvedSoFar: number;
}): string {
  const error =
    report.error === undefined
      ? ""
      : ` (${showControlCharacters(report.error.split("\n")[0] ?? "")})`;
  return `  [${finished}/${total}] ${showControlCharacters(report.instance_id)}: ${report.status}${error} in ${seconds(report.durationMs)} — ${resolvedSoFar} resolved so far\n`;
}
