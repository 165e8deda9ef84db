import { showControlCharacters } from "@pleach/coding-agent/tools";
import type { CliIo } from "./cli-support.js";

/** A running progress line; `stop` clears it. */
export interface Progress {
  stop(): void;
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
  const started = Date.now();
  let shown = false;
  const draw = () => {
    shown = true;
    const seconds = Math.floor((Date.now() - started) / 1000);
    io.stderr(`\r\x1b[2Kpleach: ${showControlCharacters(label)} running… ${seconds}s`);
  };
  let interval: NodeJS.Timeout | undefined;
  const delay = setTimeout(() => {
    draw();
    interval = setInterval(draw, 1000);
    interval.unref();
  }, delayMs);
  delay.unref();
  return {
    stop() {
      clearTimeout(delay);
      if (interval !== undefined) clearInterval(interval);
      if (shown) io.stderr("\r\x1b[2K");
    },
  };
}
