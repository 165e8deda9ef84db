# pump(FROM, TO): copy what FROM sends to TO until FROM ends, then shut TO's writing side, passing
# the end on. The relays of the session sandbox's network (the proxy's forwarder, the published
# ports' program) are run with this file before their own, as one program.
sub pump {
  my ($from, $to) = @_; my $buffer;
  while (my $n = sysread($from, $buffer, 65536)) {
    my $at = 0;
    while ($at < $n) { my $written = syswrite($to, $buffer, $n - $at, $at); return unless $written; $at += $written }
  }
  shutdown($to, 1);
}
