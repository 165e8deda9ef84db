import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it, vi } from "vitest";
import { BoundedOutput } from "./bounded-output.js";
import type { WrappedCommand } from "./os/wrap-command.js";
import { type RunProcessOptions, runProcess } from "./run-process.js";

function bash(command: string): WrappedCommand {
  // SHLVL: a top-level bash whose stdin is a socket would source ~/.bashrc.
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", SHLVL: "1" };
  return { file: "/bin/bash", args: ["-c", command], env };
}

function run(command: string, options: Partial<RunProcessOptions> = {}) {
  return runProcess(bash(command), {
    cwd: process.cwd(),
    timeoutMs: 20_000,
    maxOutputBytes: 1_000_000,
    ...options,
  });
}

/** The bytes `seq 1 last` prints, without building them all. */
function seqLength(last: number): number {
  let total = 0;
  for (let digits = 1, low = 1; low <= last; digits++, low *= 10) {
    total += (Math.min(last, low * 10 - 1) - low + 1) * (digits + 1);
  }
  return total;
}

describe("runProcess", () => {
  it("keeps the exact head and tail of 50 MB of output", async () => {
    const last = 6_500_000;
    const maxOutputBytes = 100_001;
    const result = await run(`seq 1 ${last}`, { maxOutputBytes });
    const headBytes = Math.ceil(maxOutputBytes / 2);
    const tailBytes = maxOutputBytes - headBytes;
    let head = "";
    for (let n = 1; head.length < headBytes; n++) head += `${n}\n`;
    let tail = "";
    for (let n = last; tail.length < tailBytes; n--) tail = `${n}\n${tail}`;
    const total = seqLength(last);
    expect(total).toBeGreaterThan(50_000_000);
    const dropped = (total - headBytes - tailBytes).toLocaleString("en-US");
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(true);
    expect(result.stdout).toBe(
      `${head.slice(0, headBytes)}\n[... ${dropped} bytes of stdout cut ...]\n${tail.slice(-tailBytes)}`,
    );
    expect(result.stderr).toBe("");
  });

  it("keeps interleaved stdout and stderr apart", async () => {
    const result = await run('for i in $(seq 1 3000); do echo "out $i"; echo "err $i" >&2; done');
    const lines = (label: string) =>
      Array.from({ length: 3000 }, (_, index) => `${label} ${index + 1}\n`).join("");
    expect(result.stdout).toBe(lines("out"));
    expect(result.stderr).toBe(lines("err"));
    expect(result.truncated).toBe(false);
  });

  it("gives each of 20 concurrent commands its own output", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        run(`head -c 200000 /dev/zero | tr '\\0' x; echo out-${index}; echo err-${index} >&2`),
      ),
    );
    results.forEach((result, index) => {
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe(`${"x".repeat(200_000)}out-${index}\n`);
      expect(result.stderr).toBe(`err-${index}\n`);
    });
  });

  it("passes stdin, and returns promptly when a background child holds the output", async () => {
    expect((await run("cat", { stdin: "piped\n" })).stdout).toBe("piped\n");
    const started = performance.now();
    const result = await run("(setsid sleep 3 &); echo quick");
    expect(result.stdout).toBe("quick\n");
    expect(result.exitCode).toBe(0);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("leaves no open fds behind: after output, a timeout with a child holding it, a failed start", async () => {
    const openFds = async () =>
      process.platform === "linux" ? (await readdir("/proc/self/fd")).length : 0;
    await run("true");
    const before = await openFds();
    await Promise.all(Array.from({ length: 10 }, (_, index) => run(`echo ${index}`)));
    await run("(setsid sleep 1 &); sleep 30", { timeoutMs: 100 });
    await expect(
      runProcess(
        { file: "/nonexistent/program", args: [], env: {} },
        { cwd: process.cwd(), timeoutMs: 20_000, maxOutputBytes: 100 },
      ),
    ).rejects.toMatchObject({ code: "INTERNAL" });
    await vi.waitFor(async () => expect(await openFds()).toBe(before));
  });

  it("bounds stdout and stderr each, with a marker where bytes were cut", async () => {
    const result = await run("echo out; echo err >&2; head -c 300000 /dev/zero | tr '\\0' a", {
      maxOutputBytes: 1_000,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.startsWith("out\naaa")).toBe(true);
    expect(result.stdout).toMatch(/bytes of stdout cut/);
    expect(result.stderr).toBe("err\n");
    expect(result.truncated).toBe(true);
  });
});

describe("runProcess onOutput", () => {
  it("streams decoded output as it is read, up to the byte budget", async () => {
    const seen: Array<{ stream: string; text: string }> = [];
    // The marker file lets the command wait until the first piece was seen, proving it streams.
    const marker = path.join(await useTempDir(), "seen");
    const pending = run(
      `printf 'é-first'; while [ ! -e ${marker} ]; do sleep 0.02; done; printf 'then\\n'; echo oops >&2; head -c 5000 /dev/zero | tr '\\0' z`,
      {
        maxOutputBytes: 100,
        onOutput: (stream, text) => {
          seen.push({ stream, text });
          if (text.includes("first")) void writeFile(marker, "");
        },
      },
    );
    const result = await pending;
    const streamed = (name: string) =>
      seen
        .filter((piece) => piece.stream === name)
        .map((piece) => piece.text)
        .join("");
    expect(seen[0]?.text.startsWith("é-first")).toBe(true);
    expect(streamed("stderr")).toBe("oops\n");
    // Only the byte budget of each stream is streamed; the result keeps its own head and tail.
    expect(Buffer.byteLength(streamed("stdout"))).toBe(100);
    expect(streamed("stdout").startsWith("é-firstthen\nzzz")).toBe(true);
    expect(result.truncated).toBe(true);
  });
});

describe("BoundedOutput", () => {
  /** A small deterministic generator, so a failure can be replayed. */
  function random(seed: number) {
    let state = seed;
    return (below: number) => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return state % below;
    };
  }

  it("keeps exactly the head and tail of any chunking, from a reused buffer", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = random(seed);
      const maxBytes = 2 + next(300);
      const total = next(1_500);
      const bytes = Buffer.from(Array.from({ length: total }, () => 97 + next(26)));
      const output = new BoundedOutput(maxBytes);
      const reused = Buffer.alloc(400);
      for (let offset = 0; offset < total; ) {
        const length = Math.min(total - offset, next(400) + 1);
        bytes.copy(reused, 0, offset, offset + length);
        output.push(reused.subarray(0, length));
        reused.fill(0x21);
        offset += length;
      }
      const headBytes = Math.ceil(maxBytes / 2);
      const head = bytes.subarray(0, headBytes).toString();
      const tail = bytes.subarray(Math.max(headBytes, total - (maxBytes - headBytes))).toString();
      const dropped = total - head.length - tail.length;
      expect(output.totalBytes).toBe(total);
      expect(output.truncated).toBe(dropped > 0);
      expect(output.text("stdout")).toBe(
        dropped > 0
          ? `${head}\n[... ${dropped.toLocaleString("en-US")} bytes of stdout cut ...]\n${tail}`
          : head + tail,
      );
    }
  });

  it("ignores bytes after its text is read, and keeps streams apart at any size", () => {
    const first = new BoundedOutput(64 * 1024 * 1024);
    first.push(Buffer.alloc(3 * 1024 * 1024, "a"));
    expect(first.text("stdout")).toBe("a".repeat(3 * 1024 * 1024));
    // The stream is over once read: later bytes (a straggler) change nothing.
    first.push(Buffer.from("late"));
    expect(first.text("stdout")).toBe("a".repeat(3 * 1024 * 1024));
    expect(first.totalBytes).toBe(3 * 1024 * 1024);
    for (const length of [20_000, 100_000, 5 * 1024 * 1024]) {
      const next = new BoundedOutput(64 * 1024 * 1024);
      for (let offset = 0; offset < length; offset += 65_536) {
        next.push(Buffer.alloc(Math.min(65_536, length - offset), "b"));
      }
      expect(next.text("stdout")).toBe("b".repeat(length));
    }
    // Two streams at once each get memory of their own.
    const [left, right] = [new BoundedOutput(1 << 24), new BoundedOutput(1 << 24)];
    for (let round = 0; round < 40; round++) {
      left.push(Buffer.alloc(65_536, "l"));
      right.push(Buffer.alloc(65_536, "r"));
    }
    expect(left.text("stdout")).toBe("l".repeat(40 * 65_536));
    expect(right.text("stdout")).toBe("r".repeat(40 * 65_536));
  });

  it("keeps large heads byte-exact across its buffer's growth, with UTF-8 text", () => {
    const text = "plain ascii line\n".repeat(3_000) + "é中文🙂 mixed line\n".repeat(4_000);
    const bytes = Buffer.from(text);
    for (const maxBytes of [100_000, 2 * bytes.length]) {
      const output = new BoundedOutput(maxBytes);
      const reused = Buffer.alloc(65_536);
      for (let offset = 0; offset < bytes.length; offset += 65_536) {
        const length = bytes.copy(reused, 0, offset, offset + 65_536);
        output.push(reused.subarray(0, length));
        reused.fill(0x21);
      }
      const headBytes = Math.ceil(maxBytes / 2);
      const head = bytes.subarray(0, headBytes).toString();
      const tailStart = Math.max(headBytes, bytes.length - (maxBytes - headBytes));
      const dropped = Math.max(0, tailStart - headBytes);
      const tail = bytes.subarray(tailStart).toString();
      expect(output.text("stdout")).toBe(
        dropped > 0
          ? `${head}\n[... ${dropped.toLocaleString("en-US")} bytes of stdout cut ...]\n${tail}`
          : text,
      );
    }
  });
});
