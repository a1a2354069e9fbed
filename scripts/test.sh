#!/usr/bin/env bash
# Sets up everything, then runs the linters, the layer rules, the package check (the
# wheel installed alone into a fresh environment: scripts/check_package.sh) and the
# whole test suite.
# `--fast`: the everyday lane, on a machine already set up: the linters and the tests
# not marked slow (`@pytest.mark.slow` on the test; the other lanes: tests/support/lanes.py),
# without the documentation build or the Debian packages, on every core (pytest-xdist).
# Other arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fast" ]; then
  shift
  [ -x .venv/bin/pytest ] || bash scripts/setup.sh --dev
  .venv/bin/ruff check dagmca tests scripts
  .venv/bin/mypy
  .venv/bin/lint-imports
  # on every core (-n auto; `-n 0` after --fast runs it in one process)
  exec .venv/bin/python -m pytest -m "not slow and not local_model" -n auto --durations=25 "$@"
fi
bash scripts/setup.sh --dev
# Debian packages some tests use, installed when we can (root, apt): chromium for
# the HTML viewer test (skipped, with the reason shown, without it) and graphviz to
# render the dot export (parsed either way).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  # a fresh machine's package lists are empty: update them once, only when needed
  command -v chromium >/dev/null && command -v dot >/dev/null \
    || apt-get update -qq >/dev/null 2>&1 || echo "note: apt-get update failed"
  for pkg in chromium:chromium graphviz:dot; do
    command -v "${pkg#*:}" >/dev/null && continue
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkg%%:*}" >/dev/null 2>&1 \
      || echo "note: could not install ${pkg%%:*}"
  done
fi
# The documentation: the reference pages generated from the code are up to date, and
# the site builds with no broken link or anchor (strict) into a folder thrown away after.
.venv/bin/python scripts/gen_docs.py --check
site_dir="$(mktemp -d)"
trap 'rm -rf "$site_dir"' EXIT
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site_dir"
.venv/bin/ruff check dagmca tests scripts
.venv/bin/mypy
.venv/bin/lint-imports  # the layer rules in pyproject.toml
bash scripts/check_package.sh
.venv/bin/python -m pytest --durations=25 "$@"
