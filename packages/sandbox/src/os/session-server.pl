use strict; use warnings; use Fcntl; use POSIX ();
my ($prctl, $statusFd, $keptDir, @clean) = @ARGV;
syscall($prctl + 0, 4, 0, 0, 0, 0) == 0 or die "prctl(PR_SET_DUMPABLE): $!\n";
open(my $status, '>&=', $statusFd + 0) or die "no status pipe: $!\n";
# A descriptor pleach's process inherited without close-on-exec reaches us through bubblewrap:
# none may reach a command.
opendir(my $fds, '/proc/self/fd') or die "no /proc/self/fd: $!\n";
my @inherited = grep { /^\d+$/ && $_ > 2 && $_ != $statusFd } readdir($fds); closedir($fds);
POSIX::close($_) for @inherited;
binmode($status); binmode(STDIN);
# The host's end may hand us a non-blocking descriptor: a full pipe must make us wait, not fail.
for my $h ($status, \*STDIN) { my $fl = fcntl($h, F_GETFL, 0); fcntl($h, F_SETFL, $fl & ~O_NONBLOCK) }
# Our SIGCHLD handler interrupts blocking calls (EINTR): each is tried again.
sub say_ { my $text = $_[0]; while (length $text) { my $n = syswrite($status, $text); next if !defined $n && $!{EINTR}; exit 1 unless defined $n && $n > 0; substr($text, 0, $n) = '' } }
sub entries { my ($dir) = @_; opendir(my $h, $dir) or return (); my @e = grep { $_ ne '.' && $_ ne '..' } readdir($h); closedir($h); @e }
sub remove {
  my ($p) = @_; my @st = lstat($p); return unless @st;
  if (($st[2] & 0170000) == 0040000) { chmod(0700, $p); remove("$p/$_") for entries($p); rmdir($p) } else { unlink($p) }
}
my %keep; for my $dir (@clean) { $keep{$dir} = { map { $_ => 1 } entries($dir) } }
# id => { keeper, out, err, in, report, keep, kept, keepMax, pending (stdin bytes), eof, open (output streams) }
my %cmd; my %byKeeper; my %reaping; my %sweeping;
pipe(my $wakeR, my $wakeW) or die "pipe: $!\n";
for my $h ($wakeR, $wakeW) { my $fl = fcntl($h, F_GETFL, 0); fcntl($h, F_SETFL, $fl | O_NONBLOCK) }
$SIG{CHLD} = sub { syswrite($wakeW, 'x') };
sub parents {
  my %children;
  for my $pid (entries('/proc')) {
    next unless $pid =~ /^\d+$/;
    open(my $h, '<', "/proc/$pid/stat") or next; my $line = <$h>; close($h);
    next unless defined $line && $line =~ /.*\)\s+(\S)\s+(\d+)/;
    next if $1 eq 'Z' || $1 eq 'X';
    push @{$children{$2}}, $pid;
  }
  \%children
}
sub below { my ($children, $top) = @_; my @all; my @todo = ($top); while (@todo) { my $p = shift @todo; for my $c (@{$children->{$p} || []}) { push @all, $c; push @todo, $c } } @all }
sub orphans { my ($children) = @_; grep { !$byKeeper{$_} } @{$children->{$$} || []} }
sub signal_command {
  my ($c, $sig) = @_;
  my $children = parents();
  kill($sig, below($children, $c->{keeper}), orphans($children));
}
sub try_reap {
  my ($id) = @_; my $c = $cmd{$id};
  my $children = parents();
  my @left = (below($children, $c->{keeper}), orphans($children));
  kill('KILL', @left) if @left;
  kill('KILL', $c->{keeper}) unless @left;
}
sub read_report {
  my ($c, $id) = @_; return unless $c->{report};
  my ($read, $data);
  do { $read = sysread($c->{report}, $data, 64) } while (!defined $read && $!{EINTR});
  return if !defined $read && $!{EAGAIN};
  close($c->{report}); delete $c->{report};
  say_("exit $id $1\n") if $read && $data =~ /^(\d+)/;
}
sub finish_output { my ($c, $id) = @_; return if --$c->{open} > 0; close($c->{keepFh}) if $c->{keepFh}; delete $c->{keepFh}; say_("closed $id\n") }
sub start {
  my ($id, $cwd, $command, $flags, $keep, $keepMax, %env) = @_;
  my (%r, %w);
  for my $name ('out', 'err', 'report', ($flags =~ /i/ ? ('in') : ())) { pipe($r{$name}, $w{$name}) or do { say_("failed $id pipe: $!\n"); return } }
  my $keeper = fork();
  if (!defined $keeper) { say_("failed $id fork: $!\n"); return }
  if ($keeper == 0) {
    $SIG{CHLD} = 'DEFAULT';
    close($status); close(STDIN); close($wakeR); close($wakeW);
    # Other commands' pipes: a copy here would keep their stdin from ever ending.
    for my $o (values %cmd) { close($o->{$_}) for grep { $o->{$_} } qw(in out err report keepFh) }
    close($r{$_}) for grep { $_ ne 'in' } keys %r; close($w{in}) if $w{in};
    $SIG{$_} = 'IGNORE' for qw(TERM INT HUP QUIT PIPE USR1 USR2);
    syscall($prctl + 0, 36, 1, 0, 0, 0) == 0 or POSIX::_exit(125);
    my $child = fork();
    POSIX::_exit(125) unless defined $child;
    if ($child == 0) {
      $SIG{$_} = 'DEFAULT' for qw(TERM INT HUP QUIT PIPE USR1 USR2);
      if ($r{in}) { POSIX::dup2(fileno($r{in}), 0) } else { open(STDIN, '<', '/dev/null') }
      POSIX::dup2(fileno($w{out}), 1); POSIX::dup2(fileno($w{err}), 2);
      chdir($cwd) or do { print STDERR "bwrap: Can't chdir to $cwd: $!\n"; POSIX::_exit(1) };
      %ENV = %env;
      if ($flags =~ /p/) { $ENV{SHELL} = '/bin/bash'; exec { '/usr/bin/script' } 'script', '-qefc', $command, '/dev/null' }
      else { exec { '/bin/bash' } '/bin/bash', '-c', $command }
      print STDERR "cannot run the command: $!\n";
      POSIX::_exit(127);
    }
    close($_) for grep { defined } ($r{in}, $w{out}, $w{err});
    my $report = $w{report};
    while (1) {
      my $pid = waitpid(-1, 0);
      last if $pid < 0;
      if ($pid == $child) { syswrite($report, "$?\n"); close($report); }
    }
    POSIX::_exit(0);
  }
  close($w{out}); close($w{err}); close($w{report}); close($r{in}) if $r{in};
  { my $fl = fcntl($r{report}, F_GETFL, 0); fcntl($r{report}, F_SETFL, $fl | O_NONBLOCK) }
  my $c = { keeper => $keeper, out => $r{out}, err => $r{err}, report => $r{report}, in => $w{in}, pending => '', open => 2, keepMax => $keepMax + 0, kept => 0 };
  if ($keep ne '') {
    if ($keptDir ne '' && $keep =~ /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/ && sysopen(my $fh, "$keptDir/$keep", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644)) { binmode($fh); $c->{keepFh} = $fh; $c->{keep} = $keep }
    else { say_("nokeep $id\n") }
  }
  if ($w{in}) { my $flags = fcntl($w{in}, F_GETFL, 0); fcntl($w{in}, F_SETFL, $flags | O_NONBLOCK) }
  $cmd{$id} = $c; $byKeeper{$keeper} = $id;
}
$SIG{PIPE} = 'IGNORE';
say_("ready\n");
my $buffer = '';
sub take {
  my $p = 0; my @f;
  my $field = sub { my $at = index($buffer, "\0", $p); return undef if $at < 0; my $v = substr($buffer, $p, $at - $p); $p = $at + 1; $v };
  my $kind = $field->(); return undef unless defined $kind;
  my $want = { run => 7, input => 2, eof => 1, signal => 2, reap => 1, remove => 1, clean => 0 }->{$kind};
  exit 4 unless defined $want;
  for (1 .. $want) { my $v = $field->(); return undef unless defined $v; push @f, $v }
  if ($kind eq 'run') { for (1 .. 2 * $f[6]) { my $v = $field->(); return undef unless defined $v; push @f, $v } splice(@f, 6, 1) }
  if ($kind eq 'input') { return undef if length($buffer) < $p + $f[1]; $f[1] = substr($buffer, $p, $f[1]); $p += length $f[1] }
  substr($buffer, 0, $p) = '';
  [$kind, @f]
}
while (1) {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    my $id = delete $byKeeper{$pid}; next unless defined $id;
    my $c = $cmd{$id};
    close($c->{in}) if $c->{in}; delete $c->{in};
    delete $reaping{$id};
    read_report($c, $id);
    $c->{gone} = 1; $sweeping{$id} = 1;
  }
  # A keeper gone unasked (its command killed it) leaves its processes to us, and each of them
  # killed leaves us its children: they all die before the command is said gone.
  if (%sweeping) {
    my @left = orphans(parents());
    if (@left) { kill('KILL', @left) }
    else {
      for my $id (keys %sweeping) { say_("gone $id\n"); my $c = $cmd{$id}; delete $cmd{$id} if $c && !$c->{report} && !$c->{open} }
      %sweeping = ();
    }
  }
  try_reap($_) for keys %reaping;
  my ($rin, $win) = ('', '');
  vec($rin, 0, 1) = 1; vec($rin, fileno($wakeR), 1) = 1;
  my %fds;
  for my $id (keys %cmd) {
    my $c = $cmd{$id};
    for my $name ('out', 'err', 'report') { next unless $c->{$name}; my $fd = fileno($c->{$name}); vec($rin, $fd, 1) = 1; $fds{$fd} = [$id, $name] }
    if ($c->{in} && length $c->{pending}) { vec($win, fileno($c->{in}), 1) = 1 }
  }
  my $n = select(my $rout = $rin, my $wout = $win, undef, (%reaping || %sweeping ? 0.005 : 0.5));
  next if $n <= 0;
  sysread($wakeR, my $drop, 4096) if vec($rout, fileno($wakeR), 1);
  for my $fd (keys %fds) {
    next unless vec($rout, $fd, 1);
    my ($id, $name) = @{$fds{$fd}}; my $c = $cmd{$id};
    next unless $c && $c->{$name};
    my $read = sysread($c->{$name}, my $data, 65536);
    next if !defined $read && ($!{EAGAIN} || $!{EINTR});
    if ($name eq 'report') {
      close($c->{report}); delete $c->{report};
      say_("exit $id $1\n") if $read && $data =~ /^(\d+)/;
      delete $cmd{$id} if $c->{gone} && !$c->{open};
      next;
    }
    if ($read) {
      say_("$name $id " . length($data) . "\n" . $data);
      if ($c->{keepFh} && $c->{kept} < $c->{keepMax}) {
        my $part = substr($data, 0, $c->{keepMax} - $c->{kept});
        my $wrote = syswrite($c->{keepFh}, $part);
        $c->{kept} += length $part;
        # The folder is full (its bound, or what commands put there): a part is not the whole.
        if (!defined $wrote || $wrote != length $part) { close($c->{keepFh}); delete $c->{keepFh}; unlink("$keptDir/$c->{keep}"); say_("nokeep $id\n") }
      }
    } else {
      close($c->{$name}); delete $c->{$name}; finish_output($c, $id);
      delete $cmd{$id} if $c->{gone} && !$c->{report} && !$c->{open};
    }
  }
  for my $id (keys %cmd) {
    my $c = $cmd{$id};
    next unless $c->{in} && length $c->{pending} && vec($wout, fileno($c->{in}), 1);
    my $wrote = syswrite($c->{in}, $c->{pending});
    if (defined $wrote) { substr($c->{pending}, 0, $wrote) = ''; say_("took $id $wrote\n") if $wrote }
    elsif (!$!{EAGAIN} && !$!{EINTR}) { say_("took $id " . length($c->{pending}) . "\n"); $c->{pending} = ''; close($c->{in}); delete $c->{in} }
    if ($c->{eof} && !length $c->{pending} && $c->{in}) { close($c->{in}); delete $c->{in} }
  }
  next unless vec($rout, 0, 1);
  my $read = sysread(STDIN, $buffer, 65536, length($buffer));
  next if !defined $read && $!{EINTR};
  exit 0 unless $read;
  while (my $request = take()) {
    my ($kind, @f) = @$request;
    if ($kind eq 'run') { start(@f); next }
    if ($kind eq 'clean') { for my $dir (@clean) { remove("$dir/$_") for grep { !$keep{$dir}{$_} } entries($dir) } say_("cleaned\n"); next }
    if ($kind eq 'remove') { unlink("$keptDir/$f[0]") if $keptDir ne '' && $f[0] =~ /^[A-Za-z0-9._-]+$/ && $f[0] !~ /^\./; next }
    my $c = $cmd{$f[0]}; next unless $c;
    if ($kind eq 'input') { if ($c->{in} && !$c->{eof}) { $c->{pending} .= $f[1] } else { say_("took $f[0] " . length($f[1]) . "\n") } }
    elsif ($kind eq 'eof') { $c->{eof} = 1; if ($c->{in} && !length $c->{pending}) { close($c->{in}); delete $c->{in} } }
    elsif ($kind eq 'signal') { signal_command($c, $f[1] eq 'KILL' ? 'KILL' : 'TERM') unless $c->{gone} }
    elsif ($kind eq 'reap') { $reaping{$f[0]} = 1 unless $c->{gone} }
  }
}
