import type { EvalReport, InstanceDetails, InstanceReport } from "./report.js";

/** How one list of tests came out, as SWE-bench's `tests_status` says it. */
interface SuccessFailure {
  success: string[];
  failure: string[];
}

/** One instance's report, in the shape of SWE-bench's `report.json` (`get_eval_report`). */
export interface SwebenchInstanceReport {
  /** The agent never finished (the harness failed before or while it ran). */
  patch_is_None: boolean;
  /** The agent changed at least one file. */
  patch_exists: boolean;
  /** The test patch applied over the agent's change and the test command ran. */
  patch_successfully_applied: boolean;
  resolved: boolean;
  /** Present once the tests ran. pleach grades no FAIL_TO_FAIL or PASS_TO_FAIL lists: empty. */
  tests_status?: {
    FAIL_TO_PASS: SuccessFailure;
    PASS_TO_PASS: SuccessFailure;
    FAIL_TO_FAIL: SuccessFailure;
    PASS_TO_FAIL: SuccessFailure;
  };
}

/**
 * The `--output` file: SWE-bench's run report (`make_run_report`, schema version 2: the counts
 * and the sorted id lists) with each instance's report beside it, under `instances`, keyed by id.
 */
export interface SwebenchRunReport {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  error_ids: string[];
  schema_version: 2;
  instances: Record<string, SwebenchInstanceReport>;
}

function instanceReport(report: InstanceReport, details: InstanceDetails): SwebenchInstanceReport {
  const outcome: SwebenchInstanceReport = {
    patch_is_None: details.changedFiles === undefined,
    patch_exists: (details.changedFiles?.length ?? 0) > 0,
    patch_successfully_applied: details.testsRan,
    resolved: report.resolved,
  };
  if (details.testsRan) {
    const split = ({ passed, failed }: { passed: string[]; failed: string[] }) => ({
      success: passed,
      failure: failed,
    });
    outcome.tests_status = {
      FAIL_TO_PASS: split(report.FAIL_TO_PASS),
      PASS_TO_PASS: split(report.PASS_TO_PASS),
      FAIL_TO_FAIL: { success: [], failure: [] },
      PASS_TO_FAIL: { success: [], failure: [] },
    };
  }
  return outcome;
}

/**
 * SWE-bench's report of a run, sorted as its harness sorts it. As there, an instance whose agent
 * changed no file counts as an empty patch only (neither completed, resolved nor an error), one
 * the harness could not evaluate is an error, and the others are completed: resolved or not.
 * Every instance is submitted, so none is incomplete.
 */
export function swebenchRunReport(
  report: EvalReport,
  details: readonly InstanceDetails[],
): SwebenchRunReport {
  const ids = { completed: [], empty: [], resolved: [], unresolved: [], error: [] } as Record<
    "completed" | "empty" | "resolved" | "unresolved" | "error",
    string[]
  >;
  const instances: Record<string, SwebenchInstanceReport> = {};
  report.instances.forEach((instance, index) => {
    const detail = details[index] as InstanceDetails;
    const id = instance.instance_id;
    instances[id] = instanceReport(instance, detail);
    if (detail.changedFiles !== undefined && detail.changedFiles.length === 0) {
      ids.empty.push(id);
    } else if (instance.status === "error") {
      ids.error.push(id);
    } else {
      ids.completed.push(id);
      ids[instance.status === "resolved" ? "resolved" : "unresolved"].push(id);
    }
  });
  const sorted = (list: string[]) => [...list].sort();
  return {
    total_instances: report.total,
    submitted_instances: report.total,
    completed_instances: ids.completed.length,
    resolved_instances: ids.resolved.length,
    unresolved_instances: ids.unresolved.length,
    empty_patch_instances: ids.empty.length,
    error_instances: ids.error.length,
    completed_ids: sorted(ids.completed),
    incomplete_ids: [],
    empty_patch_ids: sorted(ids.empty),
    submitted_ids: sorted(report.instances.map((instance) => instance.instance_id)),
    resolved_ids: sorted(ids.resolved),
    unresolved_ids: sorted(ids.unresolved),
    error_ids: sorted(ids.error),
    schema_version: 2,
    instances,
  };
}
