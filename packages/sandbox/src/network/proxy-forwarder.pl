use IO::Socket::INET; use IO::Socket::UNIX; use Socket qw(SOCK_STREAM);
my ($port, $path) = @ARGV;
$SIG{CHLD} = 'IGNORE'; $SIG{PIPE} = 'IGNORE'; $| = 1;
my $server = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 128, Proto => 'tcp')
  or do { print "cannot listen on 127.0.0.1:$port: $@\n"; exit 1 };
print "ready\n"; close(STDOUT);
while (1) {
  my $client = $server->accept or next;
  my $pid = fork;
  if (defined $pid && $pid == 0) {
    close($server);
    my $upstream = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $path) or exit 1;
    if (fork == 0) { pump($client, $upstream); exit 0 }
    pump($upstream, $client); exit 0;
  }
  close($client);
}
