#!/usr/bin/perl
# The command `baton check --via-cli` gives each `baton run`: it works on the checker's resource server with
# the fencing token from $BATON_FENCING_TOKEN (BEGIN, READ, hold, WRITE counter + 1, END) and starts a
# grandchild that reads the resource too while the command works. First line on stdout:
# "PIDS <command pid> <grandchild pid>". A refused (STALE) access ends the command with status 3.
#
# Arguments: port lock attempt hold1-ms hold2-ms mode grandchild-life-ms
#   mode "wait":   the grandchild stays in the command's process group and the command waits for it.
#   mode "escape": the grandchild leaves with setsid() and the command does not wait (what baton documents it
#                  cannot catch): the checker's positive control.
use strict;
use warnings;
use IO::Socket::INET;
use POSIX ();
use Time::HiRes qw(usleep);

my ($port, $lock, $attempt, $hold1, $hold2, $mode, $life) = @ARGV;
my $token = $ENV{BATON_FENCING_TOKEN};
defined $token or die "run-task: no BATON_FENCING_TOKEN\n";
$| = 1;

sub connect_resource {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp')
        or die "run-task: cannot reach the resource on port $port: $!\n";
    $s->autoflush(1);
    return $s;
}

sub access {
    my ($s, $op, $who, $value) = @_;
    print $s uc($op) . " $lock $token $who" . (defined $value ? " $value" : "") . "\n";
    my $reply = <$s>;
    defined $reply or exit 4;
    chomp $reply;
    return $reply;
}

my $s = connect_resource();
my $r = access($s, "begin", $attempt);
exit 3 unless $r =~ /^OK /;

pipe(my $rd, my $wr) or die "run-task: pipe: $!\n";
my $child = fork();
die "run-task: fork: $!\n" unless defined $child;
if ($child == 0) {
    close $rd;
    POSIX::setsid() if $mode eq "escape";
    print $wr "$$\n";
    close $wr;
    open(STDOUT, '>', '/dev/null'); # never hold baton's stdout open
    my $g = connect_resource();
    my $end = Time::HiRes::time() + $life / 1000;
    while (Time::HiRes::time() < $end) {
        access($g, "read", "$attempt/g");
        usleep(50_000);
    }
    POSIX::_exit(0);
}
close $wr;
my $gpid = <$rd>;
chomp $gpid;
print "PIDS $$ $gpid\n";

usleep($hold1 * 1000);
$r = access($s, "read", $attempt);
exit 3 unless $r =~ /^OK (\d+)/;
my $v = $1;
usleep($hold2 * 1000);
$r = access($s, "write", $attempt, $v + 1);
exit 3 unless $r =~ /^OK /;
$r = access($s, "end", $attempt);
exit 3 unless $r =~ /^OK /;
waitpid($child, 0) if $mode eq "wait";
exit 0;
