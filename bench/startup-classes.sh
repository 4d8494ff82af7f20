#!/usr/bin/env bash
# Writes baton-cli/src/main/resources/dev/baton/cli/startup-classes-BACKEND.txt, one list per backend: the
# classes one 'baton run --lock … -- true' loads on that backend's real server (the servers of
# scripts/start-servers.sh), beyond those the JDK's own archive holds. The launcher's training runs
# (dev.baton.cli.StartupTraining) load them, so that they go into each backend's class-data archive although the
# training reaches no server. Run it after a dependency upgrade or a change to what a call loads; a stale list
# only makes the start slower (a name that no longer exists is skipped).
# For Redis it also writes startup-classes-redis.classlist, the JDK's own class list of that call
# (-XX:DumpLoadedClassList, with the lambdas and method-handle classes it spins), from which the launcher makes a
# static archive (-Xshare:dump); a line another JDK cannot use is skipped there, and if the dump fails the
# launcher falls back to the dynamic archive of startup-classes-redis.txt.
#
#   bench/startup-classes.sh            every backend, this checkout's jar (bin/baton builds it if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
bin/baton --version >/dev/null # builds the jar if it is missing or stale
version="$(sed -n 's:^ *<version>\([^<]*\)</version>.*:\1:p' pom.xml | head -n 1)"
jar="$root/baton-cli/target/baton-cli-$version-all.jar"
outdir="$root/baton-cli/src/main/resources/dev/baton/cli"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

backends=(sqlite postgresql mariadb redis zookeeper)
urls=("jdbc:sqlite:$work/classes.db"
  "${BATON_BENCH_PG:-jdbc:postgresql://127.0.0.1:5432/test?user=postgres}"
  "${BATON_BENCH_MARIADB:-jdbc:mariadb://127.0.0.1:3306/test?user=root}"
  "${BATON_BENCH_REDIS:-redis://127.0.0.1:6379}"
  "${BATON_BENCH_ZOOKEEPER:-zookeeper://127.0.0.1:2181}")
for i in "${!urls[@]}"; do
  url="${urls[$i]}"
  extra=()
  if [ "${backends[$i]}" = redis ]; then
    # the launcher's properties for a Redis call (Netty's NIO transport, unpooled buffers), and the JDK's list
    extra=(-Dio.netty.transport.noNative=true -Dio.netty.allocator.type=unpooled
      -XX:DumpLoadedClassList="$work/redis.classlist")
  fi
  # without the launcher's archive, so that every class the call needs is logged with where it came from; with
  # the launcher's properties that change what a call loads (no JFR events from Lettuce and Netty)
  java -XX:TieredStopAtLevel=1 -Dio.lettuce.core.jfr=false -Dio.netty.jfr.enabled=false ${extra[@]+"${extra[@]}"} \
    -Xlog:class+load=info:file="$work/load-${backends[$i]}.log" -jar "$jar" \
    run --url "$url" --lock "startup-classes-$$" -- true >/dev/null
done
mv "$work/redis.classlist" "$outdir/startup-classes-redis.classlist"
echo "startup-classes.sh: $(wc -l <"$outdir/startup-classes-redis.classlist") lines written to $outdir/startup-classes-redis.classlist"
# classes read from the jar or the JDK's modules (not the JDK's archive, and not the classes the JVM spins at
# run time, which have no such source)
for backend in "${backends[@]}"; do
  out="$outdir/startup-classes-$backend.txt"
  sed -n 's/^\[[^]]*\]\[[^]]*\]\[[^]]*\] \([^ ]*\) source: \(jrt:\/\|file:\).*$/\1/p' "$work/load-$backend.log" \
    | LC_ALL=C sort -u >"$work/classes.txt"
  mv "$work/classes.txt" "$out"
  echo "startup-classes.sh: $(wc -l <"$out") classes written to $out"
done
