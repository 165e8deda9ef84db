// Idle connections held open by child processes, for the tests of the connection limits: each child
// holds its share of the sockets, so no process (the test's included) comes near its descriptor
// limit (`ulimit -n`, often 1024), which Node cannot raise.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** What became of the idle connections once all were closed. */
export interface IdleOutcome {
  /** Connections opened. */
  opened: number;
  /** Connections whose answer was a `408`. */
  answered408: number;
  /** Connections whose answer was a `503` (past the limit on all connections). */
  answered503: number;
  /** Connections answered something else (the first 80 characters of each kind). */
  otherAnswers: string[];
  /** Connections closed without an answer. */
  unanswered: number;
  /** Connections that failed to connect or were reset. */
  errors: number;
  /** The longest time a connection stayed open, in ms. */
  longestOpenMs: number;
  /** Every answer's body, joined (to look for what must not be there). */
  bodies: string;
}

/** Idle connections being held. */
export interface IdleConnections {
  /** Resolves once every connection is open (or already closed by the server). */
  readonly ready: Promise<void>;
  /** How many are still open now, asked of the children. */
  stillOpen(): Promise<number>;
  /** Resolves once the server closed all of them (the children give up after `giveUpMs`). */
  readonly closed: Promise<IdleOutcome>;
  /** Kill the children (their sockets go with them). */
  kill(): void;
}

const CHILD = String.raw`
const net = require("node:net");
const [port, count, half] = process.argv.slice(1).map(Number);
const host = "127.0.0.1";
let settled = 0, open = 0, ready = false;
const outcome = { opened: 0, answered408: 0, answered503: 0, otherAnswers: [], unanswered: 0, errors: 0, longestOpenMs: 0, bodies: "" };
const report = (line) => process.stdout.write(JSON.stringify(line) + "\n");
for (let i = 0; i < count; i += 1) {
  const socket = net.connect(port, host);
  let answer = "", connectedAt = 0, failed = false, counted = false;
  const settle = () => { if (counted) return; counted = true; settled += 1; check(); };
  socket.on("connect", () => {
    connectedAt = Date.now(); open += 1; outcome.opened += 1;
    // Half of them send half a request's headers, the others nothing at all.
    if (i < half) socket.write("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    settle();
  });
  socket.on("data", (chunk) => { answer += chunk.toString("latin1"); });
  socket.on("error", () => { failed = true; });
  socket.on("close", () => {
    if (connectedAt > 0) {
      open -= 1;
      outcome.longestOpenMs = Math.max(outcome.longestOpenMs, Date.now() - connectedAt);
    }
    if (failed && answer === "") outcome.errors += 1;
    else if (answer.startsWith("HTTP/1.1 408 ")) outcome.answered408 += 1;
    else if (answer.startsWith("HTTP/1.1 503 ")) outcome.answered503 += 1;
    else if (answer === "") outcome.unanswered += 1;
    else if (!outcome.otherAnswers.includes(answer.slice(0, 80))) outcome.otherAnswers.push(answer.slice(0, 80));
    const body = answer.indexOf("\r\n\r\n");
    if (body >= 0 && outcome.bodies.length < 100000) outcome.bodies += answer.slice(body + 4) + "\n";
    settle();
    if (connectedAt > 0 || failed) closedOne();
  });
}
let closedCount = 0;
function closedOne() { closedCount += 1; if (closedCount === count) { report({ done: outcome }); process.exit(0); } }
function check() { if (!ready && settled === count) { ready = true; report({ ready: true }); } }
require("node:readline")
  .createInterface({ input: process.stdin })
  .on("line", () => report({ open }))
  .on("close", () => process.exit(0));
`;

/**
 * Open `count` idle connections to `127.0.0.1:port` from `children` child processes, half of them
 * sending half a request's headers and the rest nothing.
 */
export function holdIdleConnections({
  port,
  count,
  children = Math.ceil(count / 250),
  giveUpMs = 30_000,
}: {
  port: number;
  count: number;
  children?: number;
  giveUpMs?: number;
}): IdleConnections {
  const shares = Array.from({ length: children }, (_, index) =>
    Math.floor((count + index) / children),
  );
  const processes = shares.map((share) =>
    spawn(process.execPath, ["-e", CHILD, String(port), String(share), String(share / 2)], {
      stdio: ["pipe", "pipe", "inherit"],
    }),
  );
  const readyOnes: Promise<void>[] = [];
  const doneOnes: Promise<IdleOutcome>[] = [];
  const openAnswers: Array<Array<(open: number) => void>> = processes.map(() => []);
  processes.forEach((child, index) => {
    let markReady: () => void = () => {};
    let markDone: (outcome: IdleOutcome) => void = () => {};
    let fail: (error: Error) => void = () => {};
    readyOnes.push(new Promise<void>((resolve) => (markReady = resolve)));
    doneOnes.push(
      new Promise<IdleOutcome>((resolve, reject) => {
        markDone = resolve;
        fail = reject;
      }),
    );
    createInterface({ input: child.stdout }).on("line", (line) => {
      const message = JSON.parse(line) as { ready?: true; open?: number; done?: IdleOutcome };
      if (message.ready) markReady();
      if (message.open !== undefined) openAnswers[index]?.shift()?.(message.open);
      if (message.done !== undefined) markDone(message.done);
    });
    // "close", not "exit": a child's last line can still be unread when "exit" comes.
    child.on("close", (code) => {
      markReady();
      fail(new Error(`an idle-connection child exited (${code}) before all its sockets closed`));
    });
  });
  let timer: NodeJS.Timeout | undefined;
  const kill = () => {
    clearTimeout(timer);
    for (const child of processes) child.kill("SIGKILL");
  };
  const gaveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      kill();
      reject(new Error(`the server did not close all ${count} idle connections in ${giveUpMs} ms`));
    }, giveUpMs);
    timer.unref();
  });
  const closed = Promise.race([Promise.all(doneOnes), gaveUp]).then((outcomes) => {
    clearTimeout(timer);
    return outcomes.reduce((sum, one) => ({
      opened: sum.opened + one.opened,
      answered408: sum.answered408 + one.answered408,
      answered503: sum.answered503 + one.answered503,
      otherAnswers: [...new Set([...sum.otherAnswers, ...one.otherAnswers])],
      unanswered: sum.unanswered + one.unanswered,
      errors: sum.errors + one.errors,
      longestOpenMs: Math.max(sum.longestOpenMs, one.longestOpenMs),
      bodies: sum.bodies + one.bodies,
    }));
  });
  closed.catch(() => {});
  return {
    ready: Promise.all(readyOnes).then(() => {}),
    async stillOpen() {
      const counts = await Promise.all(
        processes.map((child, index) => {
          if (child.exitCode !== null) return 0;
          return new Promise<number>((resolve) => {
            openAnswers[index]?.push(resolve);
            child.stdin?.write("open?\n");
          });
        }),
      );
      return counts.reduce((sum, one) => sum + one, 0);
    },
    closed,
    kill,
  };
}
