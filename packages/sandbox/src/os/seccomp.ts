/**
 * The seccomp filter every bubblewrap sandbox runs under (`--seccomp`): a classic BPF program,
 * written here rather than through libseccomp so that pleach needs no native module.
 *
 * It refuses what `RestrictSUIDSGID=` refuses in systemd. Inside the sandbox the caller keeps its
 * uid, so for a root caller the sandbox's root is the host's root: dropping capabilities does not
 * stop an owner from `chmod u+s`, and bubblewrap's `nosuid` holds only inside the sandbox, so a
 * command could leave a setuid-root shell in the workspace for any local user to run (and, for an
 * ordinary caller, a program that runs as that caller). So:
 * - `chmod`, `fchmod`, `fchmodat`, `fchmodat2` with `S_ISUID` or `S_ISGID` in the mode,
 *   `open`, `openat`, `creat` creating a file (`O_CREAT` or `O_TMPFILE`) with them, and `mknod`,
 *   `mknodat` with them fail with `EPERM`;
 * - `add_key`, `request_key` and `keyctl` fail with `EPERM`, as under Docker's default profile:
 *   the kernel's keyrings are not namespaced, so the caller's session and user keyrings (a login's
 *   Kerberos tickets, tokens a tool cached there) would be readable and writable from the sandbox;
 *   EPERM rather than ENOSYS, so a tool that tries a keyring and falls back does so on an error
 *   it already expects from a denying policy;
 * - `openat2` fails with `ENOSYS` (its mode is in a struct the filter cannot read; libc falls back
 *   to `openat`), and so does `io_uring_setup` (io_uring's operations never pass through seccomp);
 * - a system call of another ABI than the native one (32-bit x86 through `int 0x80`, x32, 32-bit
 *   Arm), whose numbers differ, fails with `ENOSYS`, as on a kernel built without that ABI;
 * - everything else is allowed.
 * `mkdir` is left alone: the kernel keeps only the permission and sticky bits of its mode.
 *
 * Only the low 32 bits of each argument are read (at its offset in `struct seccomp_data` on a
 * little-endian machine): the kernel reads no more of a mode or of open's flags.
 */

/** The architectures (Node's `process.arch`) pleach has a filter for. */
export const SECCOMP_ARCHITECTURES = ["x64", "arm64"] as const;

/** `struct seccomp_data`: the system call number, the audit architecture, then the arguments. */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const argumentOffset = (index: number) => 16 + 8 * index;

/** Classic BPF opcodes (`linux/bpf_common.h`). */
const BPF_LD_W_ABS = 0x00 | 0x00 | 0x20;
const BPF_JMP_JEQ_K = 0x05 | 0x10 | 0x00;
const BPF_JMP_JGE_K = 0x05 | 0x30 | 0x00;
const BPF_JMP_JSET_K = 0x05 | 0x40 | 0x00;
const BPF_RET_K = 0x06 | 0x00;

/** Filter results (`linux/seccomp.h`) and errno values. */
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;

const S_ISUID = 0o4000;
const S_ISGID = 0o2000;
/** `O_CREAT` and `__O_TMPFILE` (the same on x86-64 and arm64): flags with which open uses its mode. */
const CREATING_FLAGS = 0o100 | 0o20000000;

interface ArchitectureTable {
  /** `AUDIT_ARCH_*`: the `arch` field of `seccomp_data` for the native ABI. */
  audit: number;
  /** Numbers at or above this are another ABI sharing the audit architecture (x32). */
  foreignFrom?: number;
  /** Calls that take a mode: number and the index of the mode argument. */
  mode: ReadonlyArray<readonly [number, number]>;
  /** Calls that take a mode only when creating: number, index of the flags, index of the mode. */
  open: ReadonlyArray<readonly [number, number, number]>;
  /** Calls refused with EPERM whatever their arguments. */
  refused: readonly number[];
  /** Calls refused with ENOSYS whatever their arguments. */
  missing: readonly number[];
}

/**
 * The numbers, from `asm/unistd_64.h` (x86-64) and `asm-generic/unistd.h` (arm64, which has only
 * the `*at` forms); `fchmodat2` (Linux 6.6) is 452 in every table.
 */
const TABLES: Record<(typeof SECCOMP_ARCHITECTURES)[number], ArchitectureTable> = {
  x64: {
    audit: 0xc000003e, // AUDIT_ARCH_X86_64: EM_X86_64 (62) | 64-bit | little-endian
    foreignFrom: 0x40000000, // __X32_SYSCALL_BIT
    mode: [
      [90, 1], // chmod(path, mode)
      [91, 1], // fchmod(fd, mode)
      [268, 2], // fchmodat(dirfd, path, mode)
      [452, 2], // fchmodat2(dirfd, path, mode, flags)
      [85, 1], // creat(path, mode)
      [133, 1], // mknod(path, mode, dev)
      [259, 2], // mknodat(dirfd, path, mode, dev)
    ],
    open: [
      [257, 2, 3], // openat(dirfd, path, flags, mode)
      [2, 1, 2], // open(path, flags, mode)
    ],
    refused: [248, 249, 250], // add_key, request_key, keyctl
    missing: [437, 425], // openat2, io_uring_setup
  },
  arm64: {
    audit: 0xc00000b7, // AUDIT_ARCH_AARCH64: EM_AARCH64 (183) | 64-bit | little-endian
    mode: [
      [52, 1], // fchmod(fd, mode)
      [53, 2], // fchmodat(dirfd, path, mode)
      [452, 2], // fchmodat2(dirfd, path, mode, flags)
      [33, 2], // mknodat(dirfd, path, mode, dev)
    ],
    open: [[56, 2, 3]], // openat(dirfd, path, flags, mode)
    refused: [217, 218, 219], // add_key, request_key, keyctl
    missing: [437, 425], // openat2, io_uring_setup
  },
};

/** One step of the program before assembly: jumps name a label, or go on to the next step. */
type Step = { label: string } | { code: number; k: number; ifTrue?: string; ifFalse?: string };

const programs = new Map<string, Uint8Array>();

/**
 * The filter for `arch` as bubblewrap reads it (`struct sock_filter` entries, little-endian), a
 * copy of its own for each caller, or `undefined` for an architecture pleach has no filter for:
 * the caller must then refuse to run confined commands rather than run them without it.
 */
export function seccompFilter(arch: string = process.arch): Uint8Array | undefined {
  if (!(SECCOMP_ARCHITECTURES as readonly string[]).includes(arch)) return undefined;
  let program = programs.get(arch);
  if (program === undefined) {
    program = assemble(steps(TABLES[arch as (typeof SECCOMP_ARCHITECTURES)[number]]));
    programs.set(arch, program);
  }
  return program.slice();
}

function steps(table: ArchitectureTable): Step[] {
  const load = (offset: number): Step => ({ code: BPF_LD_W_ABS, k: offset });
  const equal = (k: number, ifTrue: string): Step => ({ code: BPF_JMP_JEQ_K, k, ifTrue });
  /** Whether any bit of `k` is set in the loaded value. */
  const anyOf = (k: number, ifTrue: string, ifFalse: string): Step => ({
    code: BPF_JMP_JSET_K,
    k,
    ifTrue,
    ifFalse,
  });
  const result = (k: number): Step => ({ code: BPF_RET_K, k });
  const program: Step[] = [
    load(ARCH_OFFSET),
    { code: BPF_JMP_JEQ_K, k: table.audit, ifFalse: "foreign" },
    load(NR_OFFSET),
  ];
  if (table.foreignFrom !== undefined) {
    program.push({ code: BPF_JMP_JGE_K, k: table.foreignFrom, ifTrue: "foreign" });
  }
  for (const [nr] of table.open) program.push(equal(nr, `open-${nr}`));
  for (const [nr, mode] of table.mode) program.push(equal(nr, `mode-${mode}`));
  for (const nr of table.refused) program.push(equal(nr, "refuse"));
  for (const nr of table.missing) program.push(equal(nr, "missing"));
  program.push(result(SECCOMP_RET_ALLOW));
  for (const [nr, flags, mode] of table.open) {
    program.push(
      { label: `open-${nr}` },
      load(argumentOffset(flags)),
      anyOf(CREATING_FLAGS, `mode-${mode}`, "allow"),
    );
  }
  const modeArguments = new Set([
    ...table.mode.map(([, mode]) => mode),
    ...table.open.map(([, , mode]) => mode),
  ]);
  for (const mode of [...modeArguments].sort()) {
    program.push(
      { label: `mode-${mode}` },
      load(argumentOffset(mode)),
      anyOf(S_ISUID | S_ISGID, "refuse", "allow"),
    );
  }
  program.push(
    { label: "allow" },
    result(SECCOMP_RET_ALLOW),
    { label: "refuse" },
    result(SECCOMP_RET_ERRNO | EPERM),
    { label: "missing" },
    { label: "foreign" },
    result(SECCOMP_RET_ERRNO | ENOSYS),
  );
  return program;
}

/** The bytes of `program`, its labels resolved to forward jumps (which must fit in a byte). */
function assemble(program: readonly Step[]): Uint8Array {
  const labels = new Map<string, number>();
  let count = 0;
  for (const step of program) {
    if ("label" in step) labels.set(step.label, count);
    else count += 1;
  }
  const bytes = Buffer.alloc(count * 8);
  let index = 0;
  for (const step of program) {
    if ("label" in step) continue;
    const offset = (label: string | undefined): number => {
      if (label === undefined) return 0;
      const target = labels.get(label);
      const jump = target === undefined ? -1 : target - index - 1;
      if (jump < 0 || jump > 255) throw new Error(`seccomp: no forward jump to ${label}`);
      return jump;
    };
    bytes.writeUInt16LE(step.code, index * 8);
    bytes.writeUInt8(offset(step.ifTrue), index * 8 + 2);
    bytes.writeUInt8(offset(step.ifFalse), index * 8 + 3);
    bytes.writeUInt32LE(step.k >>> 0, index * 8 + 4);
    index += 1;
  }
  return new Uint8Array(bytes);
}
