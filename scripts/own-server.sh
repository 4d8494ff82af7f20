#!/usr/bin/env bash
# Test servers of their own: a PostgreSQL, MariaDB, Redis, Redis Sentinel or ZooKeeper server on a free port of its own with its
# data in a directory of its own, for the tests (and checker runs) that restart, kill, pause, reconfigure or flush
# a server. It never touches the servers of scripts/start-servers.sh. The test kit's OwnServer runs this script.
#
#   own-server.sh start ENGINE DIR [OPTION...]  create DIR's server on first use (ENGINE: postgresql, mariadb, redis,
#                                               sentinel, zookeeper; OPTIONs are the engine's, see below), start it, print
#                                               "port N" (and "jmx-port N" for ZooKeeper); on a later start, the
#                                               same port, data and options
#   own-server.sh stop DIR                      a clean stop; the data stays
#   own-server.sh crash DIR                     SIGKILL (PostgreSQL: an immediate stop, which is a crash for it)
#   own-server.sh destroy DIR                   SIGKILL if running, then DIR is deleted
#
# OPTIONs: PostgreSQL `-c name=value` pairs (written to its postgresql.conf); MariaDB mariadbd options
# (`--innodb-flush-log-at-trx-commit=0`); Redis redis-server options (`--maxmemory-policy allkeys-lru`, written to
# its redis.conf after the defaults: no persistence, `repl-diskless-sync-delay 0`); Sentinel the same, its `sentinel` directives among them (`--sentinel monitor NAME 127.0.0.1 PORT 2`,
# run with redis-server --sentinel, which rewrites the file); ZooKeeper `key=value` lines of zoo.cfg.
# DIR's owner: if BATON_OWNER_PID is set, a later `start` of any own server destroys this one once that process is
# gone (a test JVM killed before it could stop its servers leaves none behind for long).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

usage() { log "usage: own-server.sh start ENGINE DIR [OPTION...] | stop DIR | crash DIR | destroy DIR"; exit 64; }
[ $# -ge 2 ] || usage
cmd=$1
if [ "$cmd" = start ]; then
  [ $# -ge 3 ] || usage
  engine=$2; dir=$3; shift 3
else
  dir=$2; shift 2
fi
dir=$(realpath -m "$dir")
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)

# A port below the kernel's ephemeral range: one inside it can be taken, between this check and the server's bind,
# by any outgoing connection of the tests (seen: Redis "bind: Address already in use" on 38272 during a CI run).
free_port() {
  local p low
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$low" -gt 21000 ] || { log "the ephemeral port range starts at $low: no room below it for test servers"; return 1; }
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % (low - 20000)))
    if ! port_open "$p" && ! grep -qx "$p" /tmp/baton-own-servers/ports 2>/dev/null; then
      echo "$p" >> /tmp/baton-own-servers/ports
      echo "$p"; return 0
    fi
  done
  log "no free port found"; return 1
}

# destroys the own servers whose owner process is gone
reap() {
  local d owner
  for d in /tmp/baton-own-servers/*/; do
    [ -f "$d/owner" ] || continue
    owner=$(cat "$d/owner")
    if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; then
      log "destroying $d: its owner (pid $owner) is gone"
      "$0" destroy "$d" || true
    fi
  done
}

server_pid() {
  case $(cat "$dir/engine") in
    postgresql) head -1 "$dir/data/postmaster.pid" 2>/dev/null || true ;;
    *) cat "$dir/pid" 2>/dev/null || true ;;
  esac
}

create() {
  mkdir -p "$dir"
  echo "$engine" > "$dir/engine"
  free_port > "$dir/port"
  : > "$dir/options"
  for a in "$@"; do echo "$a" >> "$dir/options"; done
  echo "${BATON_OWNER_PID:-}" > "$dir/owner"
  local port; port=$(cat "$dir/port")
  case $engine in
    postgresql)
      chown postgres "$dir"
      runuser -u postgres -- "$pg_bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; return 1; }
      {
        echo "port = $port"
        echo "listen_addresses = '127.0.0.1'"
        echo "unix_socket_directories = ''"
        echo "max_connections = 100"
        echo "shared_buffers = 32MB"
        while [ $# -gt 0 ]; do
          if [ "$1" = -c ] && [ $# -ge 2 ]; then echo "${2%%=*} = '${2#*=}'"; shift 2
          else log "PostgreSQL options are -c name=value pairs, not '$1'"; return 64; fi
        done
      } >> "$dir/data/postgresql.conf" ;;
    mariadb)
      chown mysql "$dir"
      mariadb-install-db --no-defaults --datadir="$dir/data" --user=mysql --auth-root-authentication-method=normal \
        --skip-test-db >"$dir/install.log" 2>&1 || { cat "$dir/install.log" >&2; return 1; } ;;
    redis|sentinel)
      {
        echo "bind 127.0.0.1"; echo "port $port"; echo "daemonize no"
        # no 5 s wait (Redis's default) before a full sync for more replicas to join it: a test's replica, or an old
        # primary back as a replica after a failover, syncs at once
        if [ "$engine" = redis ]; then echo "save \"\""; echo "appendonly no"; echo "repl-diskless-sync-delay 0"; fi
        echo "dir $dir"; echo "logfile $dir/redis.log"
        local line=
        for a in "$@"; do
          if [[ $a == --* ]]; then if [ -n "$line" ]; then echo "$line"; fi; line=${a#--}
          elif [ -z "$a" ]; then line="$line \"\""
          else line="$line $a"; fi
        done
        if [ -n "$line" ]; then echo "$line"; fi
      } > "$dir/redis.conf" ;;
    zookeeper)
      free_port > "$dir/jmx-port"
      mkdir -p "$dir/data"
      {
        echo "tickTime=1000"; echo "minSessionTimeout=1000"; echo "maxSessionTimeout=60000"
        echo "dataDir=$dir/data"; echo "clientPort=$port"; echo "clientPortAddress=127.0.0.1"
        echo "maxClientCnxns=0"; echo "admin.enableServer=false"; echo "4lw.commands.whitelist=*"
        printf '%s\n' "$@"
      } > "$dir/zoo.cfg" ;;
    *) log "unknown engine '$engine' (postgresql, mariadb, redis, sentinel, zookeeper)"; return 64 ;;
  esac
}

start() {
  local port; port=$(cat "$dir/port")
  if port_open "$port"; then log "port $port is taken (by this server, or another)"; return 1; fi
  case $(cat "$dir/engine") in
    postgresql)
      detached "$dir/start.log" runuser -u postgres -- "$pg_bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
        start || { tail -20 "$dir/postgres.log" >&2; return 1; }
      wait_port PostgreSQL "$port"
      "$pg_bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" \
        | grep -q 1 || "$pg_bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE test" ;;
    mariadb)
      local opts=(); mapfile -t opts < "$dir/options"
      detached_bg "$dir/mariadb.out" "$dir/pid" /usr/sbin/mariadbd --no-defaults --datadir="$dir/data" --port="$port" --bind-address=127.0.0.1 \
        --socket="$dir/mysqld.sock" --pid-file="$dir/mariadbd.pid" --user=mysql --log-error="$dir/mariadb.err" \
        --innodb-buffer-pool-size=32M "${opts[@]}"
      wait_port MariaDB "$port" "$(cat "$dir/pid")" || { tail -20 "$dir/mariadb.err" >&2; return 1; }
      mariadb -h 127.0.0.1 -P "$port" -uroot -e "CREATE DATABASE IF NOT EXISTS test" ;;
    redis)
      detached_bg "$dir/redis.out" "$dir/pid" redis-server "$dir/redis.conf"
      wait_port Redis "$port" "$(cat "$dir/pid")" || { tail -20 "$dir/redis.log" >&2; return 1; } ;;
    sentinel)
      detached_bg "$dir/redis.out" "$dir/pid" redis-server "$dir/redis.conf" --sentinel
      wait_port "Redis Sentinel" "$port" "$(cat "$dir/pid")" || { tail -20 "$dir/redis.log" >&2; return 1; } ;;
    zookeeper)
      local cp=/var/lib/baton-zookeeper/classpath.txt jmx; jmx=$(cat "$dir/jmx-port")
      zookeeper_classpath "$cp"
      detached_bg "$dir/zookeeper.log" "$dir/pid" env -C "$dir" java -Xmx256m -XX:TieredStopAtLevel=1 -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
        -Dcom.sun.management.jmxremote.port="$jmx" -Dcom.sun.management.jmxremote.rmi.port="$jmx" \
        -Dcom.sun.management.jmxremote.host=127.0.0.1 -Djava.rmi.server.hostname=127.0.0.1 \
        -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false \
        -cp "$(cat "$cp")" org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg"
      wait_port ZooKeeper "$port" "$(cat "$dir/pid")" || { tail -20 "$dir/zookeeper.log" >&2; return 1; }
      for _ in $(seq 1 120); do
        if [ "$( (exec 3<>"/dev/tcp/127.0.0.1/$port"; echo ruok >&3; timeout 2 head -c 4 <&3) 2>/dev/null)" = imok ]; then
          break
        fi
        sleep 0.25
      done ;;
  esac
  echo "port $port"
  if [ -f "$dir/jmx-port" ]; then echo "jmx-port $(cat "$dir/jmx-port")"; fi
}

stop() {
  local port pid; port=$(cat "$dir/port"); pid=$(server_pid)
  case $(cat "$dir/engine") in
    postgresql) runuser -u postgres -- "$pg_bin/pg_ctl" -D "$dir/data" -m "${1:-fast}" -w stop >/dev/null ;;
    *)
      if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "-${1:-TERM}" "$pid"
        for _ in $(seq 1 240); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      fi ;;
  esac
  wait_port_closed "$(cat "$dir/engine")" "$port"
}

mkdir -p /tmp/baton-own-servers
case $cmd in
  start)
    reap
    if [ ! -f "$dir/engine" ]; then create "$@"
    elif [ "$(cat "$dir/engine")" != "$engine" ]; then log "$dir holds a $(cat "$dir/engine") server"; exit 64; fi
    start ;;
  stop) stop ;;
  crash)
    if [ "$(cat "$dir/engine")" = postgresql ]; then stop immediate; else stop KILL; fi ;;
  destroy)
    if [ -f "$dir/engine" ]; then
      if [ "$(cat "$dir/engine")" = postgresql ]; then
        [ -f "$dir/data/postmaster.pid" ] && { stop immediate || true; }
      else
        pid=$(server_pid); if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
      fi
    fi
    rm -rf "$dir" ;;
  *) usage ;;
esac
