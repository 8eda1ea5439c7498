#!/usr/bin/env bash
# Installs Prometheus from Debian's package when no `prometheus` binary is on PATH; a test starts
# it to scrape a live server's /metrics (tests/api/test_prometheus_scrape.py). Only the binary is
# used: the package's own service is not needed (nor started where there is no init system).
set -euo pipefail
if command -v prometheus >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "The metrics test needs a prometheus binary on PATH; install it with your package manager." >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "Installing Prometheus from Debian's package for the metrics test..."
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
