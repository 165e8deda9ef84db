/**
 * The seccomp profile of a confined sandbox container. Docker's default profile refuses what
 * bubblewrap needs inside the container (`unshare`/`clone` of user and other namespaces, `mount`,
 * `umount2`, `pivot_root`, `setns`) unless the container has `CAP_SYS_ADMIN`, which it must not
 * have. This profile allows those and refuses, with `EPERM`, the system calls that reach kernel
 * state no container should touch or that widen the kernel's attack surface without need:
 * keyrings (not namespaced), eBPF, perf events, `userfaultfd`, io_uring, the new mount API,
 * kernel modules and kexec, clocks, swap, reboot, accounting, quotas, file handles (the
 * "shocker" escape), NUMA policy, another process's memory (`process_vm_*`, `kcmp`,
 * `pidfd_getfd`), the kernel log, legacy calls and `AF_VSOCK` sockets.
 *
 * It is a deny-list (every other call is allowed), where Docker's is an allow-list: a system call
 * added to the kernel later is allowed here until named. That is the trade-off for a profile that
 * does not copy Docker's; the container still has no capabilities and no new privileges, and
 * commands run inside bubblewrap with every capability dropped and user namespaces disabled.
 */

/** System calls refused with EPERM. Names unknown to an architecture are skipped by the runtime. */
const REFUSED = [
  // Keyrings are not namespaced: one container's keys are every container's.
  "add_key",
  "keyctl",
  "request_key",
  // Large kernel attack surface, no need in a sandbox.
  "bpf",
  "perf_event_open",
  "userfaultfd",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "fanotify_init",
  // The new mount API (bubblewrap uses mount(2)).
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "move_mount",
  "open_tree",
  "mount_setattr",
  // Kernel modules, kexec, reboot, swap, accounting, quotas.
  "init_module",
  "finit_module",
  "delete_module",
  "create_module",
  "query_module",
  "get_kernel_syms",
  "kexec_load",
  "kexec_file_load",
  "reboot",
  "swapon",
  "swapoff",
  "acct",
  "quotactl",
  "quotactl_fd",
  "nfsservctl",
  // Clocks are the host's.
  "settimeofday",
  "stime",
  "clock_settime",
  "clock_settime64",
  "clock_adjtime",
  "clock_adjtime64",
  // File handles bypass the mount namespace ("shocker").
  "name_to_handle_at",
  "open_by_handle_at",
  // NUMA memory policy.
  "get_mempolicy",
  "set_mempolicy",
  "set_mempolicy_home_node",
  "mbind",
  "migrate_pages",
  "move_pages",
  // Another process's memory and files.
  "process_vm_readv",
  "process_vm_writev",
  "kcmp",
  "pidfd_getfd",
  // The kernel log, legacy and obsolete calls.
  "syslog",
  "lookup_dcookie",
  "sysfs",
  "_sysctl",
  "ustat",
  "uselib",
  "vhangup",
  "vm86",
  "vm86old",
  "ioperm",
  "iopl",
];

/** `AF_VSOCK`: sockets to the hypervisor. */
const AF_VSOCK = 40;

/** The profile as Docker takes it (`--security-opt seccomp=FILE`). */
export function sandboxSeccompProfile(): string {
  return JSON.stringify({
    defaultAction: "SCMP_ACT_ALLOW",
    archMap: [
      {
        architecture: "SCMP_ARCH_X86_64",
        subArchitectures: ["SCMP_ARCH_X86", "SCMP_ARCH_X32"],
      },
      { architecture: "SCMP_ARCH_AARCH64", subArchitectures: ["SCMP_ARCH_ARM"] },
      { architecture: "SCMP_ARCH_PPC64LE", subArchitectures: [] },
      { architecture: "SCMP_ARCH_S390X", subArchitectures: ["SCMP_ARCH_S390"] },
      { architecture: "SCMP_ARCH_RISCV64", subArchitectures: [] },
    ],
    syscalls: [
      { names: REFUSED, action: "SCMP_ACT_ERRNO", errnoRet: 1 },
      {
        names: ["socket"],
        action: "SCMP_ACT_ERRNO",
        errnoRet: 1,
        args: [{ index: 0, value: AF_VSOCK, op: "SCMP_CMP_EQ" }],
      },
    ],
  });
}
