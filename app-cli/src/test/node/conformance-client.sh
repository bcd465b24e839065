#!/usr/bin/env bash
# Runs one or more of the official MCP conformance suite's client scenarios with execache as the client: the suite
# (pinned in package.json beside this script) starts each scenario's server on loopback and runs conformance-agent.mjs,
# an agent on stdio driving `execache serve` with that server as a url server. ClientConformanceIT runs them all; this
# is for one by hand.
#   app-cli/src/test/node/conformance-client.sh [--spec-version 2025-11-25|2026-07-28] SCENARIO...
# Needs the jar and the installed peers: ./mvnw -B -q -pl app-cli -am package -DskipTests
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
app="$(cd "$here/../../.." && pwd)"
work="$app/target/node"
cp "$here/conformance-agent.mjs" "$work/"
era=()
if [ "${1:-}" = "--spec-version" ]; then
  era=(--spec-version "$2")
  shift 2
fi
node="$work/node_modules/node/bin/node"
client="$node $work/conformance-agent.mjs $(command -v java) $app/target/execache.jar"
failed=0
for scenario in "$@"; do
  echo "== $scenario"
  if ! (cd "$work" && "$node" node_modules/@modelcontextprotocol/conformance/dist/index.js client --command "$client" \
      --scenario "$scenario" "${era[@]}" 2>&1 | grep -E 'SUCCESS|FAILURE|WARNING|Passed:|exited'); then
    failed=1
  fi
done
exit $failed
