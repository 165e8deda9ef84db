// What the jobs tests over HTTP and Docker share: a job that serves HTTP on the sandbox's loopback,
// the foreground command that asks it, and the host's processes that hold a marker.
import { hostCommandLines } from "@pleach/core/testing";

const SERVE = `require("node:http").createServer((q, s) => s.end("hello from the job")).listen(0, "127.0.0.1", function () { console.log("listening on " + this.address().port); });`;

/** A job's command: a `node:http` server on 127.0.0.1 that prints `listening on PORT`; `marker` in its arguments. */
export function serverJobCommand(marker: string): string {
  return `node -e '${SERVE}' ${marker}`;
}

/** The `until` pattern of {@link serverJobCommand}'s ready line, its port captured. */
export const LISTENING = "listening on (\\d+)";

/**
 * A foreground command that asks `http://127.0.0.1:PORT/` and prints `got BODY`, or `closed CODE`
 * when nothing answers (`ECONNREFUSED`).
 */
export function fetchCommand(port: number | string): string {
  return `node -e 'fetch("http://127.0.0.1:${port}/").then((r) => r.text()).then((t) => console.log("got", t), (e) => console.log("closed", e.cause?.code))'`;
}

/** The host's processes whose command line holds `marker`. */
export function processesWith(marker: string): string[] {
  return hostCommandLines().filter((line) => line.includes(marker));
}
