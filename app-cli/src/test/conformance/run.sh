#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against execache's url-server client
# (dev.execache.cli.ConformanceClient, in app-cli's test classes), each scenario's server on loopback.
#   app-cli/src/test/conformance/run.sh [SCENARIO...]
# Needs the jar and the test classes: ./mvnw -B -q -pl app-cli -am package -DskipTests && ./mvnw -B -q -pl app-cli -am test-compile
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
app="$(cd "$here/../../.." && pwd)"
work="$app/target/conformance"
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$work/"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  scenarios=(initialize tools_call sse-retry auth/client-credentials-basic)
fi
client="java -cp $app/target/execache.jar:$app/target/test-classes dev.execache.cli.ConformanceClient"
failed=0
for scenario in "${scenarios[@]}"; do
  echo "== $scenario"
  if ! (cd "$work" && npx --no-install conformance client --command "$client" --scenario "$scenario" 2>&1 \
      | grep -E 'SUCCESS|FAILURE|WARNING|Passed:|exited'); then
    failed=1
  fi
done
exit $failed
