#!/usr/bin/env bash
# Installs Chromium from Debian's package when /usr/bin/chromium is missing; the browser tests
# drive it with Playwright (its own browsers are never downloaded).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "The browser tests need Chromium at /usr/bin/chromium; install it with your package manager." >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "Installing Chromium from Debian's package for the browser tests..."
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
