#!/usr/bin/env bash
# Local clusters for failover tests, started by `scripts/start-servers.sh --ha` (nothing of this starts unless asked).
# Each deployment runs on fixed ports of its own, from Debian's packages and Maven Central, with its data under
# /var/lib/baton-ha, and prints one line with the URL `baton` and `baton check` accept, carrying the settings the
# docs/OPERATIONS.md recommends:
#
#   zookeeper-ensemble  3 ZooKeeper servers (QuorumPeerMain), clients on 127.0.0.1:2191-2193,
#                       quorum on 2891-2893, leader election on 3891-3893
#   redis-sentinel      a Redis primary 127.0.0.1:6390 and replica 127.0.0.1:6391 (no persistence), three Sentinels
#                       on 127.0.0.1:26390-26392 watching master `baton` (quorum 2, down after 1 s, failover
#                       timeout 5 s); the URL asks for WAIT 1 after each grant (requireReplicas=1)
#   postgresql-standby  a PostgreSQL primary 127.0.0.1:5442 and a hot standby 127.0.0.1:5443 (pg_basebackup -R,
#                       streaming, synchronous: a commit waits for the standby's flush), database `test`, trust
#
# Idempotent, and it heals: a node that is down is started again — a ZooKeeper server rejoins the ensemble; a Redis
# node starts as a replica of the primary the Sentinels name; a PostgreSQL node that is down while the other is a
# primary is re-created as its standby (pg_basebackup). So after a failover (the checker's `failover` fault) the
# deployment is whole again after one more run. Roles may have moved: the URLs name every node, so they stay valid.
# Servers run in sessions of their own and never keep a descriptor of the caller's (lib.sh's `detached*`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

base=/var/lib/baton-ha
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
ZK_PORTS=(2191 2192 2193)
REDIS_PORTS=(6390 6391)
SENTINEL_PORTS=(26390 26391 26392)
# The Sentinels' down-after: at the switch to a promoted replica each Sentinel resets its view of the primary and
# counts a PING as pending from then; if reconnecting and that PING take longer than this (as 1000 ms did with a
# busy CI run), the new primary is taken for dead at once and the Sentinels fail over a second time, back to the old
# primary just restarted (the test kit's own Sentinels use the same 3000 ms: OwnSentinels)
SENTINEL_DOWN_AFTER_MS=3000
PG_PORTS=(5442 5443)
MASTER=baton

ZK_URL="zookeeper://127.0.0.1:2191,127.0.0.1:2192,127.0.0.1:2193"
REDIS_URL="redis-sentinel://127.0.0.1:26390,127.0.0.1:26391,127.0.0.1:26392/0?requireReplicas=1&replicaTimeout=500ms#$MASTER"
PG_URL="jdbc:postgresql://127.0.0.1:5442,127.0.0.1:5443/test?user=postgres&targetServerType=primary"

# four-letter word $2 to the ZooKeeper server on port $1
zk_4lw() { (exec 3<>"/dev/tcp/127.0.0.1/$1"; echo "$2" >&3; timeout 2 cat <&3) 2>/dev/null || true; }

zookeeper_ensemble() {
  local cp=/var/lib/baton-zookeeper/classpath.txt i port dir
  zookeeper_classpath "$cp"
  for i in 1 2 3; do
    port=${ZK_PORTS[$((i - 1))]}; dir=$base/zookeeper/$i
    if port_open "$port"; then continue; fi
    if [ ! -f "$dir/zoo.cfg" ]; then
      mkdir -p "$dir/data"
      echo "$i" > "$dir/data/myid"
      cat > "$dir/zoo.cfg" <<CFG
tickTime=500
initLimit=20
syncLimit=4
minSessionTimeout=1000
maxSessionTimeout=60000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=*
server.1=127.0.0.1:2891:3891
server.2=127.0.0.1:2892:3892
server.3=127.0.0.1:2893:3893
CFG
    fi
    log "starting ZooKeeper ensemble member $i on :$port"
    detached_bg "$dir/zookeeper.log" "$dir/pid" env -C "$dir" java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
      -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$(cat "$cp")" \
      org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg"
  done
  for port in "${ZK_PORTS[@]}"; do wait_port "ZooKeeper ensemble member" "$port"; done
  # serving once a leader is elected: `srvr` answers with a Mode on a quorum member
  for _ in $(seq 1 240); do
    if zk_4lw "${ZK_PORTS[0]}" srvr | grep -q '^Mode: ' && zk_4lw "${ZK_PORTS[1]}" srvr | grep -q '^Mode: ' \
        && zk_4lw "${ZK_PORTS[2]}" srvr | grep -q '^Mode: '; then
      return 0
    fi
    sleep 0.25
  done
  log "the ZooKeeper ensemble elected no leader within 60 s (logs in $base/zookeeper/*/zookeeper.log)"; return 1
}

# the primary the Sentinels name, as "host port", or nothing
sentinel_master() {
  local p
  for p in "${SENTINEL_PORTS[@]}"; do
    if port_open "$p"; then
      redis-cli -p "$p" --raw sentinel get-master-addr-by-name "$MASTER" 2>/dev/null | paste -sd' ' && return 0
    fi
  done
}

redis_sentinel() {
  local port dir master mhost mport i
  master=$(sentinel_master || true)
  for i in 0 1; do
    port=${REDIS_PORTS[$i]}; dir=$base/redis/$port
    if port_open "$port"; then continue; fi
    mkdir -p "$dir"
    if [ ! -f "$dir/redis.conf" ]; then
      cat > "$dir/redis.conf" <<CFG
bind 127.0.0.1
port $port
save ""
appendonly no
daemonize no
dir $dir
logfile $dir/redis.log
CFG
    fi
    # a node joins as a replica of the primary: the one the Sentinels name, else the first node
    if [ -n "$master" ]; then mhost=${master% *}; mport=${master#* }; else mhost=127.0.0.1; mport=${REDIS_PORTS[0]}; fi
    if [ "$mport" != "$port" ]; then
      sed -i '/^replicaof /d' "$dir/redis.conf"; echo "replicaof $mhost $mport" >> "$dir/redis.conf"
    fi
    log "starting Redis :$port"
    detached_bg "$dir/redis.out" "$dir/pid" redis-server "$dir/redis.conf"
    wait_port Redis "$port" "$(cat "$dir/pid")" || { tail -20 "$dir/redis.log" >&2; return 1; }
  done
  for port in "${SENTINEL_PORTS[@]}"; do
    dir=$base/redis/sentinel-$port
    if port_open "$port"; then continue; fi
    mkdir -p "$dir"
    if [ ! -f "$dir/sentinel.conf" ]; then
      # Sentinel rewrites this file (the primary it follows, the replicas and Sentinels it found)
      cat > "$dir/sentinel.conf" <<CFG
bind 127.0.0.1
port $port
daemonize no
dir $dir
logfile $dir/sentinel.log
sentinel monitor $MASTER 127.0.0.1 ${REDIS_PORTS[0]} 2
sentinel down-after-milliseconds $MASTER $SENTINEL_DOWN_AFTER_MS
sentinel failover-timeout $MASTER 5000
sentinel parallel-syncs $MASTER 1
CFG
    fi
    log "starting Redis Sentinel :$port"
    detached_bg "$dir/sentinel.out" "$dir/pid" redis-server "$dir/sentinel.conf" --sentinel
    wait_port "Redis Sentinel" "$port" "$(cat "$dir/pid")" || { tail -20 "$dir/sentinel.log" >&2; return 1; }
  done
  # Sentinels that ran before keep the settings they rewrote into their files: give each this script's down-after
  for port in "${SENTINEL_PORTS[@]}"; do
    redis-cli -p "$port" sentinel set "$MASTER" down-after-milliseconds "$SENTINEL_DOWN_AFTER_MS" >/dev/null 2>&1 || true
  done
  # ready once the Sentinels agree on a primary that answers and has a replica in sync
  for _ in $(seq 1 240); do
    master=$(sentinel_master || true)
    if [ -n "$master" ] && redis-cli -p "${master#* }" info replication 2>/dev/null | grep -q '^slave0:.*state=online' \
        && [ "$(redis-cli -p "${SENTINEL_PORTS[0]}" sentinel ckquorum "$MASTER" 2>/dev/null | cut -c1-2)" = OK ]; then
      return 0
    fi
    sleep 0.25
  done
  log "Redis Sentinel: no primary with an online replica and a Sentinel quorum within 60 s (logs in $base/redis)"
  return 1
}

pg_ctl_as() { runuser -u postgres -- "$pg_bin/pg_ctl" "$@"; }
pg_is_primary() { [ "$("$pg_bin/psql" -h 127.0.0.1 -p "$1" -U postgres -d postgres -tAc 'SELECT NOT pg_is_in_recovery()' 2>/dev/null)" = t ]; }

# starts the PostgreSQL node on port $1 from its data directory (the port is an option, not in the data directory,
# which pg_basebackup copies from the other node)
pg_start() {
  local port=$1 dir=$base/postgresql/$1
  detached "$dir/start.log" runuser -u postgres -- "$pg_bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -o "-p $port" \
    -w -t 60 start || { tail -20 "$dir/postgres.log" >&2; return 1; }
  wait_port PostgreSQL "$port"
}

# re-creates the node on port $1 as a standby of the primary on port $2
pg_standby() {
  local port=$1 primary=$2 dir=$base/postgresql/$1
  log "creating the PostgreSQL standby :$port of :$primary (pg_basebackup -R)"
  rm -rf "$dir/data"; mkdir -p "$dir"; chown postgres "$dir"
  runuser -u postgres -- "$pg_bin/pg_basebackup" -h 127.0.0.1 -p "$primary" -U postgres -D "$dir/data" -R -X stream \
    -c fast >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; return 1; }
  pg_start "$port"
}

postgresql_standby() {
  local a=${PG_PORTS[0]} b=${PG_PORTS[1]} port other primary=
  mkdir -p "$base/postgresql"
  for port in "$a" "$b"; do
    if [ -f "$base/postgresql/$port/data/PG_VERSION" ] && ! port_open "$port"; then
      other=$a; [ "$port" = "$a" ] && other=$b
      if port_open "$other" && pg_is_primary "$other"; then
        pg_standby "$port" "$other"  # the other was promoted while this one was down: follow it
      else
        log "starting PostgreSQL :$port"; pg_start "$port"
      fi
    fi
  done
  if [ ! -f "$base/postgresql/$a/data/PG_VERSION" ] && [ ! -f "$base/postgresql/$b/data/PG_VERSION" ]; then
    log "creating the PostgreSQL primary :$a"
    mkdir -p "$base/postgresql/$a"; chown postgres "$base/postgresql/$a"
    runuser -u postgres -- "$pg_bin/initdb" -D "$base/postgresql/$a/data" -A trust -U postgres --no-sync \
      >"$base/postgresql/$a/initdb.log" 2>&1 || { cat "$base/postgresql/$a/initdb.log" >&2; return 1; }
    cat >> "$base/postgresql/$a/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 100
shared_buffers = 32MB
wal_level = replica
max_wal_senders = 10
wal_keep_size = 256MB
hot_standby = on
CONF
    echo "host replication postgres 127.0.0.1/32 trust" >> "$base/postgresql/$a/data/pg_hba.conf"
    pg_start "$a"
    "$pg_bin/psql" -h 127.0.0.1 -p "$a" -U postgres -d postgres -qc "CREATE DATABASE test"
  fi
  for port in "$a" "$b"; do
    if port_open "$port" && pg_is_primary "$port"; then primary=$port; fi
  done
  if [ -z "$primary" ]; then log "PostgreSQL: neither :$a nor :$b is a primary"; return 1; fi
  other=$a; [ "$primary" = "$a" ] && other=$b
  if [ ! -f "$base/postgresql/$other/data/PG_VERSION" ]; then pg_standby "$other" "$primary"; fi
  # synchronous: a commit returns once the standby has it, so a promoted standby has every grant. Set on both nodes
  # (the standby needs it once promoted) once the standby exists: before, every commit would wait for it.
  for port in "$primary" "$other"; do
    if [ "$("$pg_bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc 'SHOW synchronous_standby_names')" != '*' ]; then
      "$pg_bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "ALTER SYSTEM SET synchronous_standby_names = '*'" \
        -c "SELECT pg_reload_conf()" >/dev/null
    fi
  done
  for _ in $(seq 1 240); do
    if [ "$("$pg_bin/psql" -h 127.0.0.1 -p "$primary" -U postgres -d postgres -tAc \
        "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" -ge 1 ]; then return 0; fi
    sleep 0.25
  done
  log "PostgreSQL: the standby :$other does not stream from :$primary within 60 s"; return 1
}

mkdir -p "$base"
zookeeper_ensemble
redis_sentinel
postgresql_standby
echo "zookeeper-ensemble $ZK_URL"
echo "redis-sentinel $REDIS_URL"
echo "postgresql-standby $PG_URL"
