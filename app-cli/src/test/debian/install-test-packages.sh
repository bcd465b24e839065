#!/usr/bin/env bash
# The Debian packages the integration tests drive as real peers: nginx (the balancer in front of
# a fleet, HttpFleetIT), Chromium (the dashboard in a browser, DashboardIT) and the Prometheus
# client's OpenMetrics parser (/metrics, DashboardIT). Installed by the build when missing and it
# may (root, apt-get); otherwise it says what is missing and those tests say so when skipped.
# Never fails the build: a test that needs a missing package reports that itself.
set -u
missing=()
{ command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; } || missing+=(nginx-light)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null || missing+=(python3-prometheus-client)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing the tests' Debian packages: ${missing[*]}"
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null 2>&1; then
    exit 0
  fi
  echo "could not install ${missing[*]} with apt-get"
fi
echo "the tests that drive ${missing[*]} will be skipped: install them (Debian: sudo apt-get install ${missing[*]})"
exit 0
