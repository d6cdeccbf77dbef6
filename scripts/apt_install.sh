#!/usr/bin/env bash
# Install Debian packages the project needs, or say how to.
#
#   scripts/apt_install.sh WHAT "PACKAGES" "ELSEWHERE"
#
# WHAT names the missing tool in messages; PACKAGES are Debian package names;
# ELSEWHERE says what to install on a system without apt-get.  As root (or with
# passwordless sudo) on Debian, installs PACKAGES; otherwise stops with the exact
# command to run.  Shared by scripts/ensure_tex.sh and scripts/ensure_chromium.sh.
set -euo pipefail
what=${1:?what} packages=${2:?packages} elsewhere=${3:?elsewhere}
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo="sudo -n"
else
  echo "*** $what is missing. Install it with:" >&2
  echo "    sudo apt-get update && sudo apt-get install -y --no-install-recommends $packages" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "*** $what is missing and this is not a Debian system: $elsewhere" >&2
  exit 1
fi
echo "==> installing $what from Debian's packages: $packages"
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $packages >/dev/null
