#!/usr/bin/env bash
# Stops with a clear message unless Java 17 or newer is on the machine (Spark 4 needs it).
set -euo pipefail
required=17
if ! command -v java >/dev/null 2>&1; then
  echo "streamjobs needs Java ${required} or newer, and 'java' is not on PATH." >&2
  echo "Install it, e.g. 'sudo apt-get install openjdk-17-jre-headless' (Debian/Ubuntu)," >&2
  echo "'brew install openjdk@17' (macOS), or set JAVA_HOME and put \$JAVA_HOME/bin on PATH." >&2
  exit 1
fi
version=$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)
major=${version%%.*}
[ "$major" = "1" ] && major=$(echo "$version" | cut -d. -f2)
if ! [ "${major:-0}" -ge "$required" ] 2>/dev/null; then
  echo "streamjobs needs Java ${required} or newer; 'java' here is version ${version:-unknown}." >&2
  echo "Install it, e.g. 'sudo apt-get install openjdk-17-jre-headless', and put it first on PATH." >&2
  exit 1
fi
