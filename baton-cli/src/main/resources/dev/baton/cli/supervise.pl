# baton run's supervisor: runs the command in a process group of its own and makes sure that no member of
# that group outlives the run. perl-base is Essential on Debian; only core modules are used.
#
# Arguments: CONTROL ENDED GRACE_MS COMMAND [ARGS...]
#   CONTROL   a FIFO that baton holds open for writing for as long as it lives
#   ENDED     an empty file that baton holds open for reading: this process writes into it the moment the group
#             ended, as seconds on the boot-time clock (/proc/uptime), which keeps counting while baton is stopped
#   GRACE_MS  time between SIGTERM and SIGKILL for what is left of the group
#
# 1. Open CONTROL for reading (baton already holds it open, so this does not block) and ENDED for writing,
#    then unlink both.
# 2. Ignore INT, TERM and HUP (blocked until then): baton receives them and passes each on exactly once,
#    through CONTROL.
# 3. Fork the command: it makes its own process group (setpgid, not setsid: it keeps the terminal and the
#    session), takes the terminal's foreground if baton had it, gets back the signal dispositions baton was started
#    with, sets a parent-death SIGKILL (prctl, else setpriv when util-linux has it; this process is single-threaded,
#    so the signal fires exactly when it dies), and execs.
# 4. Serve CONTROL: one byte per order, I/T/H/Q = send SIGINT/SIGTERM/SIGHUP/SIGQUIT to the group,
#    S = stop (SIGTERM, SIGKILL after the grace), K = SIGKILL now. End of file means baton died (kill -9,
#    the OOM killer): SIGKILL the group at once and exit.
# 5. When the command exits, whatever it left in its group gets SIGTERM, then SIGKILL after the grace.
# 6. Once no process of the group runs any more, write the time into ENDED (baton may be stopped and see the end
#    only later: it compares this time with the lease's deadline), and exit with the command's status (128 + the
#    signal if a signal ended it).
#
# A member that leaves the group (setsid, setpgid) is out of reach; docs/CLI.md says so.
use strict;
# POSIX's functions from its shared library alone, loaded as XSLoader would from POSIX.pm: POSIX.pm itself, its
# export lists and the modules it uses cost several times what the rest of this script does, and XSLoader::load
# called from this script (not from a file in @INC) hands over to DynaLoader, which loads Config.pm, costing about
# as much again. POSIX.pm if that fails (a perl that links its extensions statically, or names them otherwise).
BEGIN {
    package POSIX;
    my $loaded = eval {
        DynaLoader::boot_DynaLoader('DynaLoader')
            if defined &DynaLoader::boot_DynaLoader && !defined &DynaLoader::dl_error;
        my ($so) = grep { -f } map { "$_/auto/POSIX/POSIX.so" } @INC;
        my $lib = defined $so && DynaLoader::dl_load_file($so, 0) or die;
        my $boot = DynaLoader::dl_find_symbol($lib, 'boot_POSIX') or die;
        &{DynaLoader::dl_install_xsub('POSIX::bootstrap', $boot, $so)}('POSIX');
        1;
    };
    $loaded && defined &POSIX::sigprocmask or require POSIX;
}

my ($control, $ended, $grace_ms, @cmd) = @ARGV;
$0 = "baton run: supervisor of $cmd[0]"; # what ps shows instead of this script
my $TICKS = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;
my %initial = map { $_ => $SIG{$_} } qw(INT TERM HUP QUIT);
# Blocked, not ignored, until each process has its own dispositions: a SIGTERM for the group that arrives
# while the command is between fork and exec must end it, not be discarded.
my $passed_on = POSIX::SigSet->new(POSIX::SIGINT(), POSIX::SIGTERM(), POSIX::SIGHUP(), POSIX::SIGQUIT());
my $initial_mask = POSIX::SigSet->new();
POSIX::sigprocmask(POSIX::SIG_BLOCK(), $passed_on, $initial_mask);

open(my $ctl, '<', $control) or do { print STDERR "baton: cannot open $control: $!\n"; exit 70 };
open(my $end, '>', $ended) or do { print STDERR "baton: cannot open $ended: $!\n"; exit 70 };
unlink $control, $ended;
(my $dir = $control) =~ s{/[^/]*$}{};
rmdir $dir;

# Whether baton runs in the foreground of a terminal: then the command's group gets the terminal, as a shell
# gives it to a foreground job, so the command can read it, and the terminal's Ctrl-C, Ctrl-\ and Ctrl-Z
# reach the command (once) instead of baton.
my $tty = -t STDIN && POSIX::tcgetpgrp(0) == getpgrp(0);

my $supervisor = $$;
my $pid = fork();
if (!defined $pid) {
    print STDERR "baton: cannot start '$cmd[0]': fork: $!\n";
    exit 126;
}
if ($pid == 0) {
    close $ctl;
    close $end;
    setpgrp(0, 0);
    if ($tty) {
        local $SIG{TTOU} = 'IGNORE';
        POSIX::tcsetpgrp(0, $$);
    }
    for my $sig (keys %initial) {
        $SIG{$sig} = defined $initial{$sig} && $initial{$sig} eq 'IGNORE' ? 'IGNORE' : 'DEFAULT';
    }
    POSIX::sigprocmask(POSIX::SIG_SETMASK(), $initial_mask);
    my $path = resolve($cmd[0]);
    if (!defined $path) {
        print STDERR "baton: cannot run '$cmd[0]': No such file or directory\n";
        POSIX::_exit(127);
    }
    if (-d $path || !-x _) {
        print STDERR "baton: cannot run '$cmd[0]': Permission denied\n";
        POSIX::_exit(126);
    }
    if (!pdeathsig_kill($supervisor)) {
        my $setpriv = resolve('setpriv');
        if (defined $setpriv) {
            exec { $setpriv } 'setpriv', '--pdeathsig', 'KILL', '--', @cmd;
        }
    }
    exec { $path } @cmd;
    print STDERR "baton: cannot run '$cmd[0]': $!\n";
    POSIX::_exit($! == POSIX::ENOENT() ? 127 : 126);
}
setpgrp($pid, $pid); # also here, so the group exists before the first order can name it
$SIG{$_} = 'IGNORE' for qw(INT TERM HUP);
$SIG{QUIT} = sub { kill 'QUIT', -$pid } unless defined $initial{QUIT} && $initial{QUIT} eq 'IGNORE';
POSIX::sigprocmask(POSIX::SIG_SETMASK(), $initial_mask);
$SIG{CHLD} = sub { }; # wakes the select below

my %orders = (I => 'INT', T => 'TERM', H => 'HUP', Q => 'QUIT');
my ($status, $kill_at, $killed);
while (1) {
    if (!defined $status && waitpid($pid, POSIX::WNOHANG() | ($tty ? POSIX::WUNTRACED() : 0)) == $pid) {
        my $wait_status = ${^CHILD_ERROR_NATIVE}; # $? reads 0 for a stopped child
        if (POSIX::WIFSTOPPED($wait_status)) {
            # Ctrl-Z stopped the command: stop baton's group too (this process with it), so the shell sees its
            # job stopped and takes the terminal back; on fg, hand the terminal over again and continue.
            kill 'STOP', -getpgrp(0);
            terminal_to($pid) if POSIX::tcgetpgrp(0) == getpgrp(0);
            kill 'CONT', -$pid;
        } else {
            $status = $wait_status;
            terminal_to(getpgrp(0)) if $tty && POSIX::tcgetpgrp(0) == $pid;
        }
    }
    if (defined $status) {
        last unless group_runs(); # nothing left in the group
        if (!defined $kill_at) {
            kill 'TERM', -$pid;
            $kill_at = now() + $grace_ms / 1000;
        }
    }
    if (defined $kill_at && !$killed && now() >= $kill_at) {
        kill 'KILL', -$pid;
        $killed = 1;
    }
    my $rin = '';
    vec($rin, fileno($ctl), 1) = 1;
    my $timeout = defined $kill_at ? 0.02 : 1;
    if (select(my $rout = $rin, undef, undef, $timeout) > 0) {
        my $got = sysread($ctl, my $buf, 64);
        if (!$got) {
            next if !defined $got && $! == POSIX::EINTR(); # not %!, which loads Errno.pm
            kill 'KILL', -$pid; # baton is gone: so is its command
            exit 137;
        }
        for my $order (split //, $buf) {
            if ($orders{$order}) {
                kill $orders{$order}, -$pid;
            } elsif ($order eq 'S') {
                kill 'TERM', -$pid;
                $kill_at = now() + $grace_ms / 1000 unless defined $kill_at;
            } elsif ($order eq 'K') {
                kill 'KILL', -$pid;
                $killed = 1;
            }
        }
    }
}
if (open(my $up, '<', '/proc/uptime')) {
    my ($seconds) = split ' ', scalar(<$up>) // '';
    syswrite($end, $seconds) if defined $seconds;
}
close $end;
exit(POSIX::WIFSIGNALED($status) ? 128 + POSIX::WTERMSIG($status) : POSIX::WEXITSTATUS($status));

# Seconds on a clock that only moves forward (times(2): elapsed clock ticks), as Time::HiRes is not in perl-base.
sub now {
    my ($ticks) = POSIX::times();
    return $ticks / $TICKS;
}

sub terminal_to {
    my ($group) = @_;
    local $SIG{TTOU} = 'IGNORE';
    POSIX::tcsetpgrp(0, $group);
}

# Whether any process of the group is still running. A zombie is dead: it only waits for a parent (for an
# orphan, init) to collect its status, which some container inits do late.
sub group_runs {
    return 0 unless kill 0, -$pid;
    opendir(my $proc, '/proc') or return 1;
    for my $p (readdir $proc) {
        next unless $p =~ /^\d+$/;
        open(my $f, '<', "/proc/$p/stat") or next;
        my $stat = <$f>;
        close $f;
        return 1 if defined $stat && $stat =~ /^.*\)\s+(\S)\s+\d+\s+(\d+)\s/ && $2 == $pid && $1 ne 'Z';
    }
    return 0;
}

# Gives this process a parent-death SIGKILL with prctl(2) itself, where the system call's number is known (the
# kernel's x86_64 and arm64 tables; Time::HiRes and syscall.ph are not in perl-base), and reads it back: true if
# it is set. Then no setpriv process is needed (an exec of its own, and util-linux's start). If the supervisor
# died before the signal was set, it would never fire: this process kills itself instead.
sub pdeathsig_kill {
    my ($parent) = @_;
    my $prctl = {x86_64 => 157, aarch64 => 167}->{(POSIX::uname())[4]} or return 0;
    my $set = pack('i', 0);
    # PR_SET_PDEATHSIG = 1, PR_GET_PDEATHSIG = 2 (into an int)
    syscall($prctl, 1, 9) == 0 && syscall($prctl, 2, $set) == 0 && unpack('i', $set) == 9 or return 0;
    POSIX::_exit(137) if getppid() != $parent;
    return 1;
}

sub resolve {
    my ($name) = @_;
    return -e $name ? $name : undef if $name =~ m{/};
    for my $d (split /:/, defined $ENV{PATH} ? $ENV{PATH} : '') {
        my $p = ($d eq '' ? '.' : $d) . "/$name";
        return $p if -f $p && -x _;
    }
    return undef;
}
