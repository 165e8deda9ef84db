import { createScriptedModel, type ModelAdapter } from "@pleach/coding-agent/runtime";
import { diffFileNames } from "@pleach/coding-agent/tools";
import type { EvalInstance } from "./instances.js";

/** The `--model` values that need no model: `gold` and `empty`. */
export type PseudoModelName = "gold" | "empty";

/** Whether `spec` names a pseudo-model rather than a real one. */
export function isPseudoModel(spec: string | undefined): spec is PseudoModelName {
  return spec === "gold" || spec === "empty";
}

/**
 * The pseudo-model of `--model gold` (apply the instance's reference patch through apply_diff) or
 * `--model empty` (change nothing: a baseline that resolves nothing), made per instance.
 */
export function pseudoModel(name: PseudoModelName, instance: EvalInstance): ModelAdapter {
  if (name === "empty") {
    return createScriptedModel({ steps: [{ text: "I make no change." }], name: "empty" });
  }
  const patch = instance.patch;
  if (patch === undefined || patch === "") {
    throw new Error(`${instance.instance_id} has no reference patch for --model gold`);
  }
  // Read every file first: the session's file state refuses changes to unread files.
  return createScriptedModel({
    name: "gold",
    steps: [
      {
        text: "Reading the files the reference patch changes.",
        toolCalls: diffFileNames(patch).map((file) => ({
          name: "read_file",
          input: { path: file },
        })),
      },
      { toolCalls: [{ name: "apply_diff", input: { path: ".", diff: patch } }] },
      { text: "Applied the reference patch." },
    ],
  });
}
