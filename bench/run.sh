#!/usr/bin/env bash
# Builds Baton and its benchmark module, then runs every workload (W0 floors, W1 uncontended, W2 contended,
# W3 many locks) for every subject against the servers of scripts/start-servers.sh (ZooKeeper included, as its
# own process). Writes bench/results/<time>-<mode>.{md,json} and bench/results/latest-<mode>.{md,json}.
#
#   bench/run.sh            full run (about 10 minutes), the one docs/BENCHMARKS.md quotes
#   bench/run.sh --quick    smoke run (about 3 minutes): CI uses it to check that everything runs and that the
#                           safety columns are zero (exit 1 if not, 2 if a subject failed); never a speed threshold
# Extra arguments go to the harness: --only ID,ID  --workloads w0,w1,w2,w3  --out DIR
# A full run then prints the start-up table of bench/startup.sh ('baton run' per backend beside a bare JVM)
# and writes it to bench/results/<time>-startup.md and latest-startup.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/start-servers.sh
# jansi.noreset: without it, -q still prints the ESC[0m resets of Maven's console library
export MAVEN_OPTS="${MAVEN_OPTS:-} -Djansi.noreset=true"
mvn -q -B -ntp -Dstyle.color=never install -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true \
  -pl baton-core,baton-jdbc,baton-redis,baton-zookeeper -am
mvn -q -B -ntp -Dstyle.color=never -f baton-bench/pom.xml package -DskipTests
java -Xmx2g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -jar baton-bench/target/baton-bench.jar "$@"
for arg in "$@"; do
  [ "$arg" != --quick ] || exit 0
done
bench/startup.sh
