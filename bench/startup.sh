#!/usr/bin/env bash
# The start-up table: how long one 'baton run --lock … -- true' takes per backend, beside a bare JVM
# ('java -cp DIR Hello') timed in the same run, as a ratio to that JVM. bench/run.sh runs it after every full
# run; it also runs on its own, against the servers of scripts/start-servers.sh:
#
#   bench/startup.sh                     10 rounds, this checkout's bin/baton, every backend
#   bench/startup.sh --rounds 20 --only sqlite,postgresql
#   bench/startup.sh --launcher /path/to/other/checkout/bin/baton --label main   (another build, same table)
#   bench/startup.sh --also main=/path/to/other/checkout/bin/baton   (both builds in the same rounds and table)
#   bench/startup.sh --out DIR           where the table goes (default bench/results; - for stdout only)
#
# Each round runs every command once, in turn (so a busy machine slows them alike); the table gives each
# command's median and minimum wall time over the rounds and the median's ratio to the bare JVM's median.
# Timed with bash's own clock (EPOCHREALTIME), so nothing needs installing. A call that fails is reported
# (its status and stderr) and the run exits 2. Never a pass/fail threshold: the machine may be shared.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

rounds=10
only="sqlite,postgresql,mariadb,redis,zookeeper"
launcher="$root/bin/baton"
label=""
also=()
out="$root/bench/results"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --launcher) launcher="$2"; shift 2 ;;
    --label) label="$2"; shift 2 ;;
    --also) also+=("$2"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "startup.sh: unknown argument '$1' (see the comment at the top of bench/startup.sh)" >&2; exit 64 ;;
  esac
done
[ "$rounds" -ge 1 ] 2>/dev/null || { echo "startup.sh: --rounds must be a positive number" >&2; exit 64; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/hello"
printf 'public class Hello { public static void main(String[] a) { System.out.println("Hello"); } }\n' \
  >"$work/hello/Hello.java"
javac -d "$work/hello" "$work/hello/Hello.java"
set -f # the commands below are split into words, never globbed (a URL has ? in it)

lock="startup-bench-$$"
declare -A url=(
  [sqlite]="jdbc:sqlite:$work/startup.db"
  [postgresql]="${BATON_BENCH_PG:-jdbc:postgresql://127.0.0.1:5432/test?user=postgres}"
  [mariadb]="${BATON_BENCH_MARIADB:-jdbc:mariadb://127.0.0.1:3306/test?user=root}"
  [redis]="${BATON_BENCH_REDIS:-redis://127.0.0.1:6379}"
  [zookeeper]="${BATON_BENCH_ZOOKEEPER:-zookeeper://127.0.0.1:2181}"
)
names=(bare-jvm)
declare -A cmd=([bare-jvm]="java -cp $work/hello Hello")
IFS=, read -r -a backends <<<"$only"
for b in "${backends[@]}"; do
  [ -n "${url[$b]:-}" ] || { echo "startup.sh: unknown backend '$b' (sqlite, postgresql, mariadb, redis, zookeeper)" >&2; exit 64; }
  names+=("$b")
  cmd[$b]="$launcher run --url ${url[$b]} --lock $lock -- true"
  for other in "${also[@]}"; do
    names+=("$b (${other%%=*})")
    cmd[$b (${other%%=*})]="${other#*=} run --url ${url[$b]} --lock $lock -- true"
  done
done

# One call each first: builds the jar and its start-up archive if they are missing, and checks that it works.
failed=0
for n in "${names[@]}"; do
  if ! ${cmd[$n]} >"$work/out" 2>"$work/err"; then
    echo "startup.sh: $n failed (status $?): ${cmd[$n]}" >&2
    sed 's/^/  /' "$work/err" >&2
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 2

declare -A times
for ((r = 1; r <= rounds; r++)); do
  for n in "${names[@]}"; do
    start=$EPOCHREALTIME
    ${cmd[$n]} >/dev/null 2>"$work/err" || { echo "startup.sh: $n failed in round $r" >&2; cat "$work/err" >&2; exit 2; }
    end=$EPOCHREALTIME
    times[$n]+="$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f ", (e - s) * 1000 }')"
  done
done

stat() { # stat median|min "t1 t2 …"
  tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort -n | awk -v what="$1" '{ v[NR] = $1 }
    END { if (what == "min") print v[1]; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
bare="$(stat median "${times[bare-jvm]}")"
when="$(date -u +%Y-%m-%dT%H%M%SZ)"
{
  echo "### Start-up: \`baton run --lock … -- true\`${label:+ ($label)}"
  echo
  echo "$when, $rounds rounds, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(java -version 2>&1 | head -n 1)"
  echo
  echo "| command | median ms | min ms | median ÷ bare JVM |"
  echo "|---|---:|---:|---:|"
  for n in "${names[@]}"; do
    med="$(stat median "${times[$n]}")"
    min="$(stat min "${times[$n]}")"
    ratio="$(awk -v a="$med" -v b="$bare" 'BEGIN { printf "%.1f×", a / b }')"
    what="$n"
    [ "$n" = bare-jvm ] && what="bare JVM (\`java -cp . Hello\`)"
    echo "| $what | $med | $min | $ratio |"
  done
} >"$work/table.md"
cat "$work/table.md"
if [ "$out" != - ]; then
  mkdir -p "$out"
  cp "$work/table.md" "$out/$when-startup${label:+-$label}.md"
  cp "$work/table.md" "$out/latest-startup${label:+-$label}.md"
fi
