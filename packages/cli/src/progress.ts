import { showControlCharacters } from "@pleach/coding-agent/tools";
import type { CliIo } from "./cli-support.js";

/** A running progress report; `stop` ends it. */
export interface Progress {
  stop(): void;
}

/**
 * Call `onTick` with the milliseconds elapsed since the start, first after `delayMs` and then
 * every `intervalMs`, until stopped: the elapsed-time report of a long call, shown on a terminal
 * ({@link startProgress}) or sent to an MCP client. Calls that finish within `delayMs` see no
 * tick. The timers do not keep the process alive.
 */
export function startTicker({
  delayMs,
  intervalMs,
  onTick,
}: {
  delayMs: number;
  intervalMs: number;
  onTick: (elapsedMs: number) => void;
}): Progress {
  const started = Date.now();
  const tick = () => onTick(Date.now() - started);
  let interval: NodeJS.Timeout | undefined;
  const delay = setTimeout(() => {
    tick();
    interval = setInterval(tick, intervalMs);
    interval.unref();
  }, delayMs);
  delay.unref();
  return {
    stop() {
      clearTimeout(delay);
      if (interval !== undefined) clearInterval(interval);
    },
  };
}

/**
 * Show `label` and the elapsed seconds on stderr while a long call runs (a clone, a test run),
 * only when stderr is a terminal, so logs and pipes never see control characters. Nothing is
 * shown for calls that finish within `delayMs`.
 */
export function startProgress({
  label,
  io,
  delayMs = 1000,
}: {
  label: string;
  io: CliIo;
  /** @default 1000 */
  delayMs?: number;
}): Progress {
  if (!io.stderrIsTTY) return { stop() {} };
  let shown = false;
  const ticker = startTicker({
    delayMs,
    intervalMs: 1000,
    onTick: (elapsedMs) => {
      shown = true;
      const seconds = Math.floor(elapsedMs / 1000);
      io.stderr(`\r\x1b[2Kpleach: ${showControlCharacters(label)} running… ${seconds}s`);
    },
  });
  return {
    stop() {
      ticker.stop();
      if (shown) io.stderr("\r\x1b[2K");
    },
  };
}
