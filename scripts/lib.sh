# Shell functions shared by scripts/start-servers.sh and scripts/own-server.sh (sourced, not run).

log() { echo "${0##*/}: $*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_port NAME PORT [PID]: waits until PORT accepts connections; with PID, fails at once if that process ended
wait_port() {
  local name=$1 port=$2 pid=${3:-}
  for _ in $(seq 1 120); do
    if port_open "$port"; then return 0; fi
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then log "$name (pid $pid) ended before it opened port $port"; return 1; fi
    sleep 0.25
  done
  log "$name did not open port $port within 30 s"; return 1
}

wait_port_closed() {
  local name=$1 port=$2
  for _ in $(seq 1 240); do
    if ! port_open "$port"; then return 0; fi
    sleep 0.25
  done
  log "$name did not close port $port within 60 s"; return 1
}

# Runs a command with no descriptor of the caller's but 0-2 (so a server never keeps a caller's lock file, pipe or
# socket open after the caller exits), in a session of its own, reading /dev/null and writing to the log file $1.
# `detached LOG cmd…` waits for the command (one that starts a daemon and returns, like pg_ctl);
# `detached_bg LOG PIDFILE cmd…` leaves it running in the background and writes its pid to PIDFILE.
close_inherited() {
  local fd
  for fd in $(ls "/proc/$BASHPID/fd"); do
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
}
detached() {
  local logfile=$1; shift
  ( close_inherited; exec setsid "$@" < /dev/null >> "$logfile" 2>&1 )
}
detached_bg() {
  local logfile=$1 pidfile=$2; shift 2
  ( close_inherited; exec setsid "$@" < /dev/null >> "$logfile" 2>&1 ) &
  echo $! > "$pidfile"
}

# The classpath of the ZooKeeper server (scripts/zookeeper/pom.xml), resolved once into $1.
zookeeper_classpath() {
  local file=$1 here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  if [ ! -s "$file" ]; then
    mkdir -p "$(dirname "$file")"
    log "resolving the ZooKeeper server's classpath (Maven, once)"
    # jansi.noreset: without it, -q still prints the console library's ESC[0m resets
    MAVEN_OPTS="${MAVEN_OPTS:-} -Djansi.noreset=true" mvn -q -B -ntp -Dstyle.color=never -f "$here/zookeeper/pom.xml" \
      dependency:build-classpath -Dmdep.outputFile="$file.tmp" >&2
    mv "$file.tmp" "$file"
  fi
}
