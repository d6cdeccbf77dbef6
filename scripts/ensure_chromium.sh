#!/usr/bin/env bash
# Make sure a headless Chromium is installed (the book's browser tests drive it
# over the DevTools protocol), from Debian's packages when we may
# (scripts/apt_install.sh).  Silent when it is there.
set -euo pipefail
for name in chromium chromium-browser google-chrome; do
  command -v "$name" >/dev/null && exit 0
done
exec "$(dirname "$0")/apt_install.sh" "Chromium (the book's browser tests need it)" "chromium" \
  "install Chromium (any recent version with --headless), then re-run the tests."
