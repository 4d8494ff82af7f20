#!/usr/bin/env bash
# Proves the test suite leaves the servers a developer already runs alone: `record FILE` notes, for each server of
# scripts/start-servers.sh, the process listening on its port and when it started, and writes a sentinel value
# into it (a Redis key, a row in PostgreSQL and in MariaDB); `verify FILE` fails, naming the server, if any of them
# was restarted (another process or start time) or lost its sentinel (flushed, dropped). CI runs it around
# `mvn -B -ntp verify`.
#
#   servers-untouched.sh record FILE | verify FILE
#
# BATON_UNTOUCHED (optional): the servers to watch as "name:port" words, default
# "postgresql:5432 mariadb:3306 redis:6379 zookeeper:2181 pgbouncer:6432".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -eq 2 ] || { log "usage: servers-untouched.sh record FILE | verify FILE"; exit 64; }
cmd=$1 file=$2
servers=${BATON_UNTOUCHED:-"postgresql:5432 mariadb:3306 redis:6379 zookeeper:2181 pgbouncer:6432"}

# "pid starttime" of the process listening on a TCP port of this host (from /proc; root sees every process)
listener() {
  local port=$1 hex inodes inode fd
  hex=$(printf '%04X' "$port")
  inodes=$(awk -v p=":$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' /proc/net/tcp /proc/net/tcp6 | sort -u)
  [ -n "$inodes" ] || return 0
  for inode in $inodes; do
    fd=$(find /proc/[0-9]*/fd -maxdepth 1 -lname "socket:\[$inode\]" -print -quit 2>/dev/null || true)
    if [ -n "$fd" ]; then
      local pid=${fd#/proc/}; pid=${pid%%/*}
      echo "$pid $(awk '{ print $22 }' "/proc/$pid/stat")"
      return 0
    fi
  done
}

sentinel_write() {
  local name=$1 port=$2 value=$3
  case $name in
    postgresql) PGOPTIONS="-c client_min_messages=warning" psql -h 127.0.0.1 -p "$port" -U postgres -d test -qc \
      "CREATE TABLE IF NOT EXISTS baton_ci_sentinel (v text); DELETE FROM baton_ci_sentinel; INSERT INTO baton_ci_sentinel VALUES ('$value')" ;;
    mariadb) mariadb -h 127.0.0.1 -P "$port" -uroot test -e \
      "CREATE TABLE IF NOT EXISTS baton_ci_sentinel (v varchar(64)); DELETE FROM baton_ci_sentinel; INSERT INTO baton_ci_sentinel VALUES ('$value')" ;;
    redis) redis-cli -h 127.0.0.1 -p "$port" set baton:ci-sentinel "$value" >/dev/null ;;
  esac
}

sentinel_read() {
  local name=$1 port=$2
  case $name in
    postgresql) psql -h 127.0.0.1 -p "$port" -U postgres -d test -tAc "SELECT v FROM baton_ci_sentinel" 2>/dev/null || true ;;
    mariadb) mariadb -h 127.0.0.1 -P "$port" -uroot test -NBe "SELECT v FROM baton_ci_sentinel" 2>/dev/null || true ;;
    redis) redis-cli -h 127.0.0.1 -p "$port" get baton:ci-sentinel 2>/dev/null || true ;;
    *) echo "-" ;;
  esac
}

case $cmd in
  record)
    : > "$file"
    value="sentinel-$(date +%s)-$RANDOM"
    for s in $servers; do
      name=${s%%:*} port=${s#*:}
      id=$(listener "$port")
      [ -n "$id" ] || { log "nothing listens on port $port ($name): start it with scripts/start-servers.sh"; exit 1; }
      sentinel_write "$name" "$port" "$value"
      echo "$name $port $id $(sentinel_read "$name" "$port")" >> "$file"
    done
    log "recorded $(wc -l < "$file") servers in $file" ;;
  verify)
    failed=0
    while read -r name port pid start value; do
      id=$(listener "$port")
      if [ "$id" != "$pid $start" ]; then
        log "$name on port $port was restarted or stopped during the run: before pid $pid (start $start), now ${id:-nothing listening}"
        failed=1
      fi
      now=$(sentinel_read "$name" "$port")
      if [ "$now" != "$value" ]; then
        log "$name on port $port lost its sentinel value during the run (before '$value', now '$now'): flushed or restarted"
        failed=1
      fi
    done < "$file"
    if [ $failed -ne 0 ]; then
      log "a test touched a server a developer already runs; such a test must use a server of its own (scripts/own-server.sh)"
      exit 1
    fi
    log "every server that ran before still runs, unrestarted, with its data" ;;
  *) log "usage: servers-untouched.sh record FILE | verify FILE"; exit 64 ;;
esac
