#!/usr/bin/env bash
# Installs PostgreSQL from Debian's package when no pg_ctl is found; the tests start their own server.
set -euo pipefail
if command -v pg_ctl >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "The tests need PostgreSQL (pg_ctl, initdb); install it with your package manager." >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "Installing PostgreSQL from Debian's package for the store tests..."
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
