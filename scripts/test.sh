#!/usr/bin/env bash
# Sets up everything, then runs the linters and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Graphviz lets the export tests render the dot output too (they parse it either way).
if ! command -v dot >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get install -y -qq graphviz >/dev/null 2>&1 || echo "note: graphviz not installed; dot output is only parsed"
fi
.venv/bin/ruff check dagmca tests scripts
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
