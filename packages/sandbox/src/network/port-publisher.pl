# The inside end of a session sandbox's published ports: it reaches the host's publisher socket
# (bound read-only in the sandbox), says it is the control connection, and for each line
# "ID PORT" the host sends there connects to 127.0.0.1:PORT in the sandbox's network and to the
# publisher socket again ("data ID", or "refused ID" when nothing listens), relaying the two, one
# process per direction, passing on each end's shutdown.
use IO::Socket::INET; use IO::Socket::UNIX; use Socket qw(SOCK_STREAM);
my ($path) = @ARGV;
$SIG{CHLD} = 'IGNORE'; $SIG{PIPE} = 'IGNORE'; $| = 1;
my $control = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $path)
  or do { print "cannot reach $path: $!\n"; exit 1 };
syswrite($control, "control\n") or do { print "cannot write to $path: $!\n"; exit 1 };
print "ready\n"; close(STDOUT);
while (my $line = <$control>) {
  my ($id, $port) = $line =~ /^([0-9a-f-]{1,64}) ([0-9]{1,5})\n$/ or next;
  my $pid = fork;
  next unless defined $pid && $pid == 0;
  close($control);
  my $back = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $path) or exit 1;
  my $up = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp');
  unless ($up) { syswrite($back, "refused $id\n"); exit 0 }
  syswrite($back, "data $id\n") or exit 1;
  if (fork == 0) { pump($back, $up); exit 0 }
  pump($up, $back); exit 0;
}
