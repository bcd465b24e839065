#!/bin/bash
# The release as a person without Java installs and uses it, measured (not a test): on a PATH with
# Node and no Java (nor Deno), in an empty HOME,
#   1. an empty npm prefix to the first cache hit, from the packed tarballs (deno from the registry,
#      through the machine's npm cache: the first time on a machine it is downloaded);
#   2. a CLI hit through the installed command against `java -version` (the system's java and the
#      bundled runtime's), alternating, medians;
#   3. serve's resident memory when idle (after initialize).
#   ./mvnw -B -DskipTests package -pl dist -am && benchmarks/release.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
dist=$here/../dist/target
package=$(ls "$dist"/execache-[0-9]*.tgz | head -1)
platform=$(ls "$dist"/execache-linux-x64-*.tgz | head -1)
ROUNDS=${ROUNDS:-11}
system_java=$(command -v java)
npm_cache=${npm_config_cache:-$HOME/.npm}

work=$(mktemp -d)
cleanup() {
  [[ -n "${serve_pid:-}" ]] && kill "$serve_pid" 2>/dev/null
  [[ -x "$work/prefix/node_modules/.bin/execache" ]] && "$work/prefix/node_modules/.bin/execache" server stop >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/bin" "$work/home" "$work/prefix"
for command in /usr/bin/*; do
  name=${command##*/}
  real=$(readlink -f "$command")
  case "$real" in */jvm/*|*/java-*) continue ;; esac
  case "$name" in java*|deno) continue ;; esac
  ln -s "$command" "$work/bin/$name"
done
export PATH=$work/bin HOME=$work/home XDG_CACHE_HOME=$work/cache XDG_CONFIG_HOME=$work/config
export npm_config_cache=$npm_cache npm_config_update_notifier=false
unset JAVA_HOME EXECACHE_NO_DAEMON
if command -v java >/dev/null; then echo "java is on the PATH: not a machine without Java" >&2; exit 1; fi
printf 'return { greeting: `Hello, ${context.name}!` };\n' > "$work/hello.ts"
execache=$work/prefix/node_modules/.bin/execache
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $(basename "$package") + $(basename "$platform")"
start=$(now)
(cd "$work/prefix" && npm install --no-audit --no-fund --loglevel=error "$package" "$platform" >/dev/null) || exit 1
installed=$(now)
(cd "$work" && "$execache" run hello.ts --context '{"name":"Ada"}' >/dev/null 2>"$work/miss.err") || { cat "$work/miss.err"; exit 1; }
missed=$(now)
(cd "$work" && "$execache" run hello.ts --context '{"name":"Ada"}' 2>&1 >/dev/null) | grep -q "cache hit" || { echo "no hit" >&2; exit 1; }
hit=$(now)
echo "empty prefix to first hit: $(ms $start $hit) ms (npm install $(ms $start $installed) ms, first run (miss) $(ms $installed $missed) ms, first hit $(ms $missed $hit) ms)"

# warm: the resident server is up and each kind of command has its class-data archive
for i in 1 2 3; do (cd "$work" && "$execache" -q run hello.ts --context '{"name":"Ada"}' >/dev/null 2>&1); done
timed() { local s=$(now); "$@" >/dev/null 2>&1 || echo "FAILED: $*" >&2; echo $(ms $s $(now)); }
names=(system_java bundled_java hit)
declare -A all m
for r in $(seq 1 "$ROUNDS"); do
  for t in 0 1 2; do
    n=${names[$(( (r + t) % 3 ))]}
    case $n in
      system_java) v=$(timed "$system_java" -version) ;;
      bundled_java) v=$(timed "$work/prefix/node_modules/@execache/linux-x64/runtime/bin/java" -version) ;;
      hit) v=$(cd "$work" && timed "$execache" -q run hello.ts --context '{"name":"Ada"}') ;;
    esac
    all[$n]="${all[$n]:-} $v"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for n in "${names[@]}"; do
  m[$n]=$(echo ${all[$n]} | median)
  echo "$n median ${m[$n]} ms  (all:${all[$n]})"
done
echo "hit / java -version: $(awk -v a="${m[hit]}" -v b="${m[system_java]}" 'BEGIN {printf "%.2f", a / b}')x (system java)," \
  "$(awk -v a="${m[hit]}" -v b="${m[bundled_java]}" 'BEGIN {printf "%.2f", a / b}')x (bundled runtime)"

# serve, idle after initialize: stdin held open by a FIFO
mkfifo "$work/in"
cd "$work"
"$execache" serve < "$work/in" > "$work/serve.out" 2> "$work/serve.err" &
serve_pid=$!
exec 8> "$work/in"
echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' >&8
for i in $(seq 1 600); do grep -q '"id":1' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&8
sleep "${IDLE_SECONDS:-10}"
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null; }
# the installed command is the bash launcher (which execs java) once the install script ran, else
# the Node launcher with java as its child
if [[ "$(cat "/proc/$serve_pid/comm")" == java ]]; then
  java_pid=$serve_pid
  launcher="no Node process (the install script put the bash launcher in place)"
else
  java_pid=$(pgrep -n -P "$serve_pid")
  launcher="node launcher $(( $(rss "$serve_pid") / 1024 )) MB"
fi
echo "serve idle ${IDLE_SECONDS:-10} s after initialize: java $(( $(rss "$java_pid") / 1024 )) MB resident; $launcher"
exec 8>&-
wait "$serve_pid" 2>/dev/null
serve_pid=
