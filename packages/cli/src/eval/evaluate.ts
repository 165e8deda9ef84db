import { showControlCharacters } from "@pleach/coding-agent/tools";
import type { EvalInstance } from "./instances.js";
import {
  type EvalReport,
  formatProgressLine,
  type InstanceDetails,
  summarizeReports,
} from "./report.js";
import { type EvaluateInstanceOptions, evaluateInstance } from "./run-instance.js";

/** Options of {@link evaluateAll}. */
export interface EvaluateAllOptions
  extends Omit<EvaluateInstanceOptions, "instance" | "abortSignal"> {
  instances: readonly EvalInstance[];
  /** The model's name, for the report. */
  model: string;
  /** Instances run at once. */
  concurrency: number;
  /** Where progress lines go (stderr). */
  progress: (line: string) => void;
}

/** Run `work` over `items`, at most `concurrency` at a time, keeping the order of `items`. */
async function mapConcurrently<Item, Result>(
  items: readonly Item[],
  concurrency: number,
  work: (item: Item) => Promise<Result>,
): Promise<Result[]> {
  const results: Result[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as Item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/**
 * Evaluate every instance, `concurrency` at a time, reporting progress as each starts and ends.
 * Ctrl-C (SIGINT) aborts the instances still running, which then report an error.
 */
export async function evaluateAll({
  instances,
  model,
  concurrency,
  progress,
  ...options
}: EvaluateAllOptions): Promise<{ report: EvalReport; details: InstanceDetails[] }> {
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  process.once("SIGINT", onInterrupt);
  let finished = 0;
  let resolvedSoFar = 0;
  let evaluated: Awaited<ReturnType<typeof evaluateInstance>>[];
  try {
    evaluated = await mapConcurrently(instances, concurrency, async (instance) => {
      progress(`  started  ${showControlCharacters(instance.instance_id)}\n`);
      const outcome = await evaluateInstance({
        ...options,
        instance,
        abortSignal: controller.signal,
      });
      finished += 1;
      if (outcome.report.resolved) resolvedSoFar += 1;
      progress(
        formatProgressLine({
          report: outcome.report,
          finished,
          total: instances.length,
          resolvedSoFar,
        }),
      );
      return outcome;
    });
  } finally {
    process.off("SIGINT", onInterrupt);
  }
  return {
    report: summarizeReports(
      model,
      evaluated.map((outcome) => outcome.report),
    ),
    details: evaluated.map((outcome) => outcome.details),
  };
}
