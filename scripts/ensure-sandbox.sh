#!/usr/bin/env bash
# Installs what drivers' sandboxes need, from Debian's packages, when missing: bubblewrap (every
# driver runs inside it), the acl tools (a bundle's data roots are shared with its group) and
# iproute2 (the multi-host tests build their hosts out of network namespaces with `ip netns`).
set -euo pipefail
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v setfacl >/dev/null 2>&1 || missing+=(acl)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "Drivers run in a sandbox that needs: ${missing[*]}; install them with your package manager." >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "Installing ${missing[*]} from Debian's packages for drivers' sandboxes..."
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
