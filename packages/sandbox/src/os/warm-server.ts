import { statSync } from "node:fs";
import { MKFIFO_PATH } from "./warm-control.js";

/**
 * The server a warm sandbox runs as its pid 1 (see `warm-sandbox.ts`): its Perl program, how it is
 * started inside bubblewrap, and its small protocol.
 */

/** The only Perl pleach runs, in a sandbox: the warm sandbox's server, the proxy's forwarder. */
export const PERL_PATH = "/usr/bin/perl";
/** Where the folder of the output FIFOs (in the host's temporary folder) is mounted (read-only) inside the sandbox. */
const CONTROL_MOUNT = "/dev/.pleach-warm";
/** `prctl`'s system call number, per architecture (`PR_SET_DUMPABLE` is 4 everywhere). */
export const PRCTL_SYSCALL: Partial<Record<NodeJS.Architecture, number>> = {
  x64: 157,
  arm64: 167,
  riscv64: 167,
  loong64: 167,
  arm: 172,
  ia32: 172,
  s390x: 172,
  ppc64: 171,
};

/**
 * The server inside the sandbox. Reads requests from stdin as NUL-terminated fields:
 * `run, cwd, command, n, name1, value1, ...` and `reap`. Writes `ready`, `exit <wait status>` and
 * `reaped` lines on the status fd it is given (the one after bubblewrap's inputs). It is the
 * sandbox's pid 1 (`--as-pid-1`): the kernel delivers it no signal from inside the namespace that
 * it has no handler for (it has none), so a command can neither kill nor stop it, and `kill(-1)`
 * from it reaches every other process there.
 */
const SERVER = String.raw`
my ($ctl, $prctl, $statusFd, @clean) = @ARGV;
syscall($prctl + 0, 4, 0, 0, 0, 0) == 0 or die "prctl(PR_SET_DUMPABLE): $!\n";
open(my $status, '>&=', $statusFd + 0) or die "no status pipe: $!\n";
sub report { syswrite($status, "$_[0]\n") or exit 1 }
sub entries { my ($dir) = @_; opendir(my $h, $dir) or return (); my @e = grep { $_ ne '.' && $_ ne '..' } readdir($h); closedir($h); @e }
sub remove {
  my ($p) = @_; my @st = lstat($p); return unless @st;
  if (($st[2] & 0170000) == 0040000) { chmod(0700, $p); remove("$p/$_") for entries($p); rmdir($p) } else { unlink($p) }
}
my %keep; for my $dir (@clean) { $keep{$dir} = { map { $_ => 1 } entries($dir) } }
sub others {
  my @alive;
  for my $pid (entries('/proc')) {
    next unless $pid =~ /^\d+$/ && $pid != $$;
    open(my $h, '<', "/proc/$pid/stat") or next; my $line = <$h>; close($h);
    push @alive, $pid if defined $line && $line =~ /.*\)\s+([A-Za-z])/ && $1 ne 'Z' && $1 ne 'X';
  }
  @alive
}
report('ready');
my ($buffer, @fields) = ('');
while (1) {
  1 while waitpid(-1, 1) > 0;
  while ((my $at = index($buffer, "\0")) >= 0) { push @fields, substr($buffer, 0, $at); substr($buffer, 0, $at + 1) = '' }
  if (@fields && $fields[0] eq 'reap') {
    shift @fields;
    my $tries = 0;
    while (1) { kill('KILL', -1); 1 while waitpid(-1, 1) > 0; last unless others(); select(undef, undef, undef, 0.001); exit 2 if ++$tries > 5000 }
    for my $dir (@clean) { remove("$dir/$_") for grep { !$keep{$dir}{$_} } entries($dir) }
    report('reaped');
    next;
  }
  if (@fields >= 4 && $fields[0] eq 'run' && @fields >= 4 + 2 * $fields[3]) {
    my (undef, $cwd, $command, $count) = splice(@fields, 0, 4);
    my %env = splice(@fields, 0, 2 * $count);
    my $child = fork();
    if (!defined $child) { report('exit 32256'); next }
    if ($child == 0) {
      close($status);
      open(STDIN, '<', '/dev/null') or exit 126;
      open(STDOUT, '>', "$ctl/out") or exit 126;
      open(STDERR, '>', "$ctl/err") or exit 126;
      chdir($cwd) or do { print STDERR "bwrap: Can't chdir to $cwd: $!\n"; exit 1 };
      %ENV = %env;
      exec { '/bin/bash' } '/bin/bash', '-c', $command;
      print STDERR "cannot run /bin/bash: $!\n";
      exit 127;
    }
    # The host sends nothing while a command runs (a timeout kills the whole sandbox).
    waitpid($child, 0);
    report("exit $?");
    next;
  }
  exit 4 if @fields && $fields[0] ne 'run';
  my $read = sysread(STDIN, $buffer, 65536, length($buffer));
  exit 0 unless $read;
}
`;

/** Whether this host can run warm sandboxes: a trusted Perl and `mkfifo`, a known `prctl`. */
export function warmSandboxSupported(): boolean {
  if (PRCTL_SYSCALL[process.arch] === undefined) return false;
  return [PERL_PATH, MKFIFO_PATH].every((file) => {
    try {
      const stats = statSync(file);
      return stats.isFile() && stats.uid === 0 && (stats.mode & 0o022) === 0;
    } catch {
      return false;
    }
  });
}

/**
 * What follows the sandbox's own arguments in bubblewrap's argv to run the server: the FIFO folder
 * `control` mounted read-only, the server as pid 1 in `/`, told its status fd and the private
 * folders to empty after each command.
 */
export function warmServerArguments({
  control,
  statusFd,
  cleanFolders,
}: {
  control: string;
  statusFd: number;
  cleanFolders: readonly string[];
}): string[] {
  const prctl = PRCTL_SYSCALL[process.arch];
  if (prctl === undefined) throw new Error(`no prctl number for ${process.arch}`);
  return [
    "--ro-bind",
    control,
    CONTROL_MOUNT,
    "--as-pid-1",
    "--chdir",
    "/",
    "--",
    PERL_PATH,
    "-e",
    SERVER,
    "--",
    CONTROL_MOUNT,
    String(prctl),
    String(statusFd),
    ...cleanFolders,
  ];
}

/** The request that runs `command` in `cwd` with exactly `env`. */
export function runRequest(
  cwd: string,
  command: string,
  env: Readonly<Record<string, string>>,
): string {
  const fields = ["run", cwd, command, String(Object.keys(env).length)];
  for (const [name, value] of Object.entries(env)) fields.push(name, value);
  return `${fields.join("\0")}\0`;
}

/** The request that kills what the last command left and empties the private folders. */
export const REAP_REQUEST = "reap\0";
