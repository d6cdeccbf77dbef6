#!/usr/bin/env bash
# `make bench`: benchmark the head evaluation against torch; installs torch's CPU build into VENV when missing.
set -euo pipefail
venv=$1
"$venv/bin/python" -c "import torch" 2>/dev/null || {
  "$venv/bin/python" -m pip -V >/dev/null 2>&1 || "$venv/bin/python" -m ensurepip --default-pip >/dev/null
  "$venv/bin/python" -m pip install -qq torch==2.13.0
}
"$venv/bin/python" -m mhanw.bench --out build/bench
