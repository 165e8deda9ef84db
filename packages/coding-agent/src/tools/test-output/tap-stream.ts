import { Parser, type Result } from "tap-parser";

/** One TAP test point (`ok 1 - name`, `not ok 2 - name # TODO`), at any depth. */
export type TapTestPoint = Result;

/**
 * A TAP stream read line by line by tap-parser, which knows TAP's grammar: subtests (indented,
 * with or without a `# Subtest` header), YAML diagnostics, directives and escapes. Every test
 * point, nested ones included, goes to `onTestPoint`, in the order tap-parser settles them (a
 * point waits for the line after it, which may open its diagnostics).
 */
export class TapStream {
  readonly #parser = new Parser();

  constructor(onTestPoint: (point: TapTestPoint) => void) {
    const follow = (parser: Parser) => {
      parser.on("assert", onTestPoint);
      parser.on("child", follow);
    };
    follow(this.#parser);
  }

  /** Reads one line, given without its line break. */
  write(line: string): void {
    this.#parser.write(`${line}\n`);
  }

  /** Ends the stream: test points still waiting are settled. */
  end(): void {
    this.#parser.end();
  }
}

/** Whether a test point stands for a test that ran and failed (not a todo, not skipped). */
export function isFailure(point: TapTestPoint): boolean {
  return !point.ok && !point.todo && !point.skip;
}
