#!/usr/bin/env bash
# Sets up everything, then runs the linters and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check dagmca tests scripts
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
