import { useTempDir } from "@pleach/core/testing";
import { describe, expect, it } from "vitest";
import { createCommandWrapper } from "./create-command-wrapper.js";
import { SECCOMP_ARCHITECTURES, seccompFilter } from "./seccomp.js";
import { attackSuiteSkipReason } from "./test-support/suite.js";

/** `struct sock_filter`, as the kernel reads it. */
interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

function decode(bytes: Uint8Array): Instruction[] {
  expect(bytes.length % 8).toBe(0);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const program: Instruction[] = [];
  for (let offset = 0; offset < view.length; offset += 8) {
    program.push({
      code: view.readUInt16LE(offset),
      jt: view.readUInt8(offset + 2),
      jf: view.readUInt8(offset + 3),
      k: view.readUInt32LE(offset + 4),
    });
  }
  return program;
}

const LOAD = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JSET = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET = 0x06; // BPF_RET | BPF_K
const JUMPS = new Set([JEQ, JGE, JSET]);

const ALLOW = 0x7fff0000;
const EPERM = 0x00050000 | 1;
const ENOSYS = 0x00050000 | 38;

/** A system call as seccomp sees it; arguments are 64-bit. */
interface Call {
  arch: number;
  nr: number;
  args?: readonly bigint[];
}

/** Run `program` on `call` as the kernel would, refusing anything outside what it may contain. */
function evaluate(program: readonly Instruction[], { arch, nr, args = [] }: Call): number {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr >>> 0, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((value, index) => {
    data.writeBigUInt64LE(BigInt.asUintN(64, value), 16 + 8 * index);
  });
  let accumulator = 0;
  let pc = 0;
  for (;;) {
    const instruction = program[pc];
    if (instruction === undefined) throw new Error(`ran off the program at ${pc}`);
    const { code, jt, jf, k } = instruction;
    if (code === RET) return k;
    if (code === LOAD) {
      if (k % 4 !== 0 || k + 4 > 64) throw new Error(`bad load at ${pc}: ${k}`);
      accumulator = data.readUInt32LE(k);
      pc += 1;
    } else if (JUMPS.has(code)) {
      const taken =
        code === JEQ
          ? accumulator === k
          : code === JGE
            ? accumulator >= k
            : (accumulator & k) !== 0;
      pc += 1 + (taken ? jt : jf);
    } else {
      throw new Error(`unexpected opcode ${code} at ${pc}`);
    }
  }
}

const ARCHES = {
  x64: {
    audit: 0xc000003e,
    foreign: [0x40000003, 0xc00000b7, 0], // i386 (int 0x80), another 64-bit arch, none
    mode: { chmod: [90, 1], fchmod: [91, 1], fchmodat: [268, 2], fchmodat2: [452, 2] },
    create: { creat: [85, 1], mknod: [133, 1], mknodat: [259, 2] },
    open: { open: [2, 1, 2], openat: [257, 2, 3] },
    keyring: { add_key: 248, request_key: 249, keyctl: 250 },
    others: { read: 0, write: 1, mkdir: 83, mkdirat: 258, execve: 59, capget: 125 },
  },
  arm64: {
    audit: 0xc00000b7,
    foreign: [0x40000028, 0xc000003e, 0], // 32-bit Arm, another 64-bit arch, none
    mode: { fchmod: [52, 1], fchmodat: [53, 2], fchmodat2: [452, 2] },
    create: { mknodat: [33, 2] },
    open: { openat: [56, 2, 3] },
    keyring: { add_key: 217, request_key: 218, keyctl: 219 },
    // On arm64 90 is capget: the x86-64 numbers mean nothing here.
    others: { read: 63, write: 64, mkdirat: 34, execve: 221, capget: 90, chmodOnX64: 268 },
  },
} as const;

const O_CREAT = 0o100n;
const O_WRONLY = 0o1n;
const O_TMPFILE = 0o20000000n | 0o200000n;

describe("seccompFilter", () => {
  it("has a filter for x64 and arm64 only", () => {
    expect(SECCOMP_ARCHITECTURES).toEqual(["x64", "arm64"]);
    for (const arch of ["ia32", "arm", "riscv64", "ppc64", "s390x", "loong64"]) {
      expect(seccompFilter(arch)).toBeUndefined();
    }
    const [first, second] = [seccompFilter("x64"), seccompFilter("x64")];
    expect(first).toEqual(second);
    expect(first).not.toBe(second);
  });

  for (const [name, table] of Object.entries(ARCHES)) {
    describe(name, () => {
      const bytes = seccompFilter(name) as Uint8Array;
      const program = decode(bytes);
      const run = (nr: number, ...args: bigint[]) =>
        evaluate(program, { arch: table.audit, nr, args });

      it("checks the architecture first, and every jump stays in the program, forward", () => {
        expect(program[0]).toEqual({ code: LOAD, jt: 0, jf: 0, k: 4 });
        expect(program[1]).toMatchObject({ code: JEQ, jt: 0, k: table.audit });
        const mismatch = program[2 + (program[1]?.jf ?? 0)];
        expect(mismatch).toEqual({ code: RET, jt: 0, jf: 0, k: ENOSYS });
        expect(program[2]).toEqual({ code: LOAD, jt: 0, jf: 0, k: 0 });
        expect(program.length).toBeLessThan(64);
        program.forEach(({ code, jt, jf }, index) => {
          expect([LOAD, JEQ, JGE, JSET, RET]).toContain(code);
          if (JUMPS.has(code)) {
            expect(index + 1 + jt).toBeLessThan(program.length);
            expect(index + 1 + jf).toBeLessThan(program.length);
          } else {
            expect([jt, jf]).toEqual([0, 0]);
          }
        });
        expect(program.at(-1)?.code).toBe(RET);
      });

      it("refuses every call of another ABI", () => {
        for (const arch of table.foreign) {
          for (const nr of [0, 1, 2, 90, 257, 452]) {
            expect(evaluate(program, { arch, nr, args: [0n, 0n, 0n, 0n] })).toBe(ENOSYS);
          }
        }
        if (name === "x64") {
          // x32 shares AUDIT_ARCH_X86_64, with bit 30 set in the number.
          expect(run(0x40000000 | 90, 0n, 0o4755n)).toBe(ENOSYS);
          expect(run(0x40000000 | 1, 1n, 0n, 0n)).toBe(ENOSYS);
        }
      });

      it("refuses a setuid or setgid mode to chmod, creat and mknod, and allows any other", () => {
        for (const [nr, at] of [...Object.values(table.mode), ...Object.values(table.create)]) {
          const withMode = (mode: bigint) => {
            const args = [0n, 0n, 0n, 0n, 0n, 0n];
            args[at] = mode;
            return run(nr, ...args);
          };
          for (const mode of [0o4755n, 0o2755n, 0o6755n, 0o4000n, 0o2000n, 0o104755n]) {
            expect(withMode(mode)).toBe(EPERM);
          }
          for (const mode of [0o755n, 0o644n, 0o1777n, 0o777n, 0o100644n, 0o10644n, 0n]) {
            expect(withMode(mode)).toBe(ALLOW);
          }
          // The kernel reads the low bits only; the upper half of the register is not looked at.
          expect(withMode(0o4755n | (1n << 40n))).toBe(EPERM);
          expect(withMode(0o755n | (0o6000n << 32n))).toBe(ALLOW);
        }
      });

      it("refuses a setuid or setgid mode to open only when it creates a file", () => {
        for (const [nr, flagsAt, modeAt] of Object.values(table.open)) {
          const open = (flags: bigint, mode: bigint) => {
            const args = [0n, 0n, 0n, 0n, 0n, 0n];
            args[flagsAt] = flags;
            args[modeAt] = mode;
            return run(nr, ...args);
          };
          expect(open(O_CREAT | O_WRONLY, 0o4755n)).toBe(EPERM);
          expect(open(O_CREAT, 0o2644n)).toBe(EPERM);
          expect(open(O_TMPFILE | O_WRONLY, 0o4700n)).toBe(EPERM);
          expect(open(0o20000000n, 0o4700n)).toBe(EPERM);
          expect(open(O_CREAT | O_WRONLY, 0o644n)).toBe(ALLOW);
          expect(open(O_TMPFILE | O_WRONLY, 0o600n)).toBe(ALLOW);
          // Without O_CREAT or O_TMPFILE the mode is not used, whatever it holds.
          expect(open(O_WRONLY, 0o4755n)).toBe(ALLOW);
          expect(open(0n, 0o6777n)).toBe(ALLOW);
        }
      });

      it("refuses add_key, request_key and keyctl with EPERM, whatever their arguments", () => {
        for (const nr of Object.values(table.keyring)) {
          expect(run(nr)).toBe(EPERM);
          expect(run(nr, 0n, -3n, 0n, 0n, 0n)).toBe(EPERM);
          expect(run(nr, 0x7fn, -4n, 1n << 40n)).toBe(EPERM);
        }
      });

      it("makes openat2 and io_uring_setup missing, and allows every other call", () => {
        expect(run(437, 0n, 0n, 0n, 24n)).toBe(ENOSYS);
        expect(run(425, 8n, 0n)).toBe(ENOSYS);
        for (const nr of Object.values(table.others)) {
          expect(run(nr, 0o6777n, 0o6777n, 0o6777n, 0o6777n, 0o6777n, 0o6777n)).toBe(ALLOW);
        }
      });
    });
  }
});

describe("the bubblewrap wrapper", () => {
  it.skipIf(process.platform !== "linux")(
    "gives the filter to bubblewrap on fd 3, and refuses (NO_SANDBOX) on an architecture without one",
    async () => {
      const skipReason = await attackSuiteSkipReason();
      if (skipReason !== undefined) return;
      const root = await useTempDir({ prefix: "pleach-seccomp-" });
      const wrapper = createCommandWrapper({ warmIdleMs: 0 });
      const request = { command: "true", root, cwd: root, env: {}, network: false } as const;
      const arch = Object.getOwnPropertyDescriptor(process, "arch");
      try {
        const invocation = await wrapper.invocation({ ...request, mode: "read-only" });
        expect(invocation.args.join(" ")).toContain("--seccomp 3 ");
        expect(invocation.inputs).toEqual([seccompFilter(process.arch)]);
        await invocation.release?.();
        Object.defineProperty(process, "arch", { ...arch, value: "riscv64" });
        for (const mode of ["read-only", "workspace-write"] as const) {
          await expect(wrapper.invocation({ ...request, mode })).rejects.toMatchObject({
            code: "NO_SANDBOX",
            message: expect.stringContaining("no seccomp filter for riscv64"),
          });
        }
        const unconfined = await wrapper.invocation({ ...request, mode: "danger-full-access" });
        expect(unconfined.inputs).toBeUndefined();
      } finally {
        if (arch !== undefined) Object.defineProperty(process, "arch", arch);
        await wrapper.close?.();
      }
    },
  );
});
