#!/usr/bin/env bash
# Installs Maven from Debian's package when `mvn` is missing: `streamjobs dev kafka` (the broker
# for the Kafka example, `make run`) and the tests resolve the Kafka broker's jars with it. The
# server itself needs no `mvn`: it resolves jobs' jars with Spark's own resolver.
set -euo pipefail
command -v mvn >/dev/null 2>&1 && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "The Kafka development broker and the tests need Maven ('mvn'); install it with your package manager." >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "Installing Maven from Debian's package..."
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq maven >/dev/null
