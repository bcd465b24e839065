#!/bin/bash
# One alternating run: java -version, a CLI hit through the resident server (thin client with the
# launcher's flags), a warm miss of `return 1 + 1` through it, and the same hit and miss in-process.
# The quick form of `PerformanceReport cli` (which also measures these, 11 rounds of nine commands):
#   ./mvnw -B -q -DskipTests package -pl app-cli -am && ROUNDS=7 benchmarks/cli-quick.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
J=${EXECACHE_JAR:-$here/../app-cli/target/execache.jar}
C=${J%/*}/execache-client.jar   # the thin client's own jar, as the launcher runs it
work=$(mktemp -d); trap 'java -jar "$J" server stop >/dev/null 2>&1; rm -rf "$work"' EXIT
cp "$here"/cli-quick/*.ts "$work"; cd "$work"; mkdir -m 700 run
export XDG_RUNTIME_DIR=$PWD/run XDG_CACHE_HOME=$HOME/.cache
unset EXECACHE_NO_DAEMON
DB=$PWD/cache.db
ROUNDS=${ROUNDS:-7}
java -jar $J server start >/dev/null
EXECACHE_NO_DAEMON=1 java -XX:ArchiveClassesAtExit=$PWD/inproc.jsa -jar $J -q run hello.ts --db $DB --ttl 1h >/dev/null 2>&1
java -XX:ArchiveClassesAtExit=$PWD/client.jsa -jar $C -q run hello.ts --db $DB --ttl 1h >/dev/null 2>&1
ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1 || echo "FAILED: $*" >&2; echo $(( ($(date +%s%N) - s) / 1000000 )); }
names=(version server_hit server_miss inproc_hit inproc_miss)
declare -A all
for r in $(seq 1 $ROUNDS); do
  for t in 0 1 2 3 4; do
    n=${names[$(( (r + t) % 5 ))]}
    case $n in
      version) v=$(ms java -Xshare:auto -version);;
      server_hit) v=$(ms java -XX:TieredStopAtLevel=1 -XX:SharedArchiveFile=$PWD/client.jsa -Xlog:cds=off -jar $C -q run hello.ts --db $DB --ttl 1h);;
      server_miss) v=$(ms java -XX:TieredStopAtLevel=1 -XX:SharedArchiveFile=$PWD/client.jsa -Xlog:cds=off -jar $C -q run one.ts --db $DB --ttl 1h --context "{\"s\":\"$r-$RANDOM$RANDOM\"}");;
      inproc_hit) v=$(EXECACHE_NO_DAEMON=1 ms java -XX:TieredStopAtLevel=1 -XX:SharedArchiveFile=$PWD/inproc.jsa -Xlog:cds=off -jar $J -q run hello.ts --db $DB --ttl 1h);;
      inproc_miss) v=$(EXECACHE_NO_DAEMON=1 ms java -XX:TieredStopAtLevel=1 -XX:SharedArchiveFile=$PWD/inproc.jsa -Xlog:cds=off -jar $J -q run one.ts --db $DB --ttl 1h --context "{\"p\":\"$r-$RANDOM$RANDOM\"}");;
    esac
    all[$n]="${all[$n]:-} $v"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${names[@]}"; do echo "$n median $(echo ${all[$n]} | median) ms  (all: ${all[$n]})"; done
