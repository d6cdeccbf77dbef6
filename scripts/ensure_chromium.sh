#!/usr/bin/env bash
# Make sure a headless Chromium is installed (the book's browser tests drive it
# over the DevTools protocol).  As root (or with passwordless sudo) on Debian,
# install Debian's package; otherwise stop and print the exact command to run.
# Silent when it is there.
set -euo pipefail
packages="chromium"
for name in chromium chromium-browser google-chrome; do
  command -v "$name" >/dev/null && exit 0
done
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo="sudo -n"
else
  echo "*** Chromium is missing (the book's browser tests need it). Install it with:" >&2
  echo "    sudo apt-get update && sudo apt-get install -y --no-install-recommends $packages" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "*** Chromium is missing and this is not a Debian system: install Chromium (any recent" >&2
  echo "    version with --headless), then re-run the tests." >&2
  exit 1
fi
echo "==> installing Chromium from Debian's packages: $packages"
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $packages >/dev/null
