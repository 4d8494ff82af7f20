#!/usr/bin/env bash
# Starts every server Baton's tests need, if it is not already running: PostgreSQL (127.0.0.1:5432,
# trust auth, database `test`), MariaDB (127.0.0.1:3306, root without password, database `test`),
# Redis (127.0.0.1:6379), ZooKeeper (127.0.0.1:2181) and PgBouncer in transaction mode in front of PostgreSQL (127.0.0.1:6432,
# database `test`; the tests check that the session strategy refuses it). Installs a missing server
# from Debian's packages first (ZooKeeper: its server jar from Maven Central, run as its own JVM). Idempotent.
#
# `start-servers.sh --ha` starts only the local clusters for failover tests instead, on ports of their own (a 3-node
# ZooKeeper ensemble, Redis primary + replica + 3 Sentinels, PostgreSQL primary + streaming standby), and prints one
# `<deployment> <url>` line each: see scripts/ha-servers.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = --ha ]; then
  exec "$here/ha-servers.sh"
fi
. "$here/lib.sh"
# what the servers' start commands print (their own logs are the servers' own)
startlog=/tmp/baton-start-servers.log

apt_updated=
ensure_package() {
  local bin=$1 pkg=$2
  if ! command -v "$bin" >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/"$bin" >/dev/null 2>&1; then
    log "installing $pkg"
    if [ -z "$apt_updated" ]; then apt-get update -qq; apt_updated=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null
  fi
}

# PostgreSQL
if ! port_open 5432; then
  ensure_package pg_ctlcluster postgresql
  log "starting PostgreSQL"
  detached "$startlog" pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
  wait_port PostgreSQL 5432
fi
if command -v psql >/dev/null 2>&1; then
  psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
    || psql -h 127.0.0.1 -U postgres -d postgres -qc "CREATE DATABASE test"
fi

# MariaDB
if ! port_open 3306; then
  ensure_package mariadbd mariadb-server
  log "starting MariaDB"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  detached "$startlog" start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  wait_port MariaDB 3306
fi
if command -v mariadb >/dev/null 2>&1; then
  mariadb -h 127.0.0.1 -uroot -e "CREATE DATABASE IF NOT EXISTS test"
fi

# Redis
if ! port_open 6379; then
  ensure_package redis-server redis-server
  log "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  detached "$startlog" redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_port Redis 6379
fi

# ZooKeeper 3.9 as its own process: the server jar from Maven Central (scripts/zookeeper/pom.xml), one
# standalone server whose data lives in $zk (so sessions survive a restart, as on a real ensemble). Its start
# command is written to $zk/run.sh (the same command starts it again by hand).
zk=/var/lib/baton-zookeeper
if ! port_open 2181; then
  log "starting ZooKeeper"
  mkdir -p "$zk/data"
  zookeeper_classpath "$zk/classpath.txt"
  cat > "$zk/zoo.cfg" <<CFG
tickTime=1000
minSessionTimeout=1000
maxSessionTimeout=60000
dataDir=$zk/data
clientPort=2181
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=*
CFG
  cat > "$zk/run.sh" <<RUN
#!/bin/sh
# Starts the tests' ZooKeeper in the background (written by scripts/start-servers.sh).
# JMX on 127.0.0.1:2182 without authentication: the checker's session-kill ends a session through the server's
# own ConnectionMXBean.terminateSession (ZooKeeper has no command for it)
cd "$zk" && nohup setsid java -Xmx512m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \\
  -Dcom.sun.management.jmxremote.port=2182 -Dcom.sun.management.jmxremote.rmi.port=2182 \\
  -Dcom.sun.management.jmxremote.host=127.0.0.1 -Djava.rmi.server.hostname=127.0.0.1 \\
  -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false \\
  -cp "\$(cat "$zk/classpath.txt")" org.apache.zookeeper.server.ZooKeeperServerMain "$zk/zoo.cfg" \\
  >> "$zk/zookeeper.log" 2>&1 < /dev/null &
echo \$! > "$zk/zookeeper.pid"
RUN
  chmod +x "$zk/run.sh"
  detached "$startlog" "$zk/run.sh"
  wait_port ZooKeeper 2181
fi

# PgBouncer in transaction mode, configured under /tmp (it refuses to run as root: it runs as postgres)
if ! port_open 6432; then
  ensure_package pgbouncer pgbouncer
  conf=/tmp/baton-pgbouncer
  mkdir -p "$conf"
  cat > "$conf/pgbouncer.ini" <<INI
[databases]
test = host=127.0.0.1 port=5432 dbname=test

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = 6432
unix_socket_dir =
auth_type = trust
auth_file = $conf/userlist.txt
pool_mode = transaction
default_pool_size = 5
max_client_conn = 200
ignore_startup_parameters = extra_float_digits,options
logfile = $conf/pgbouncer.log
pidfile = $conf/pgbouncer.pid
INI
  printf '"postgres" ""\n' > "$conf/userlist.txt"
  chown -R postgres "$conf" 2>/dev/null || true
  log "starting PgBouncer (transaction mode) on :6432"
  detached "$conf/start.log" su postgres -s /bin/sh -c "pgbouncer -d $conf/pgbouncer.ini" \
    || detached "$conf/start.log" pgbouncer -d -u postgres "$conf/pgbouncer.ini"
  wait_port PgBouncer 6432
fi

log "PostgreSQL :5432, MariaDB :3306, Redis :6379, ZooKeeper :2181 and PgBouncer :6432 are up"
