#!/usr/bin/env bash
# dagmca as a package, as a user installs it: builds the wheel and the sdist
# (`python -m build`), checks their metadata (`twine check --strict`) and that the wheel
# holds the package alone, then installs the wheel into a fresh virtual environment with
# no index, from a wheelhouse of what it requires, and runs dagmca from there:
# `--version`, `doctor --llm fake` and a run on the scripted fake. That environment must
# hold no torch, triton, nvidia-* or cuda-* package, in at most MAX_MB megabytes.
# The wheelhouse (scripts/wheelhouse.py) holds what the wheel requires at the versions
# .venv holds, so the packages installed are the ones tested; it is filled from the
# configured index once, in the user's cache ($DAGMCA_WHEELHOUSE, else
# ~/.cache/dagmca/wheelhouse), and a later check downloads only what changed.
# Needs .venv with the dev extra (scripts/setup.sh --dev); scripts/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
PY="$root/.venv/bin/python"
MAX_MB=400
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# a step's output only when it fails
quietly() { "$@" >"$work/step.log" 2>&1 || { cat "$work/step.log"; echo "check_package: failed: $*"; return 1; }; }

# --no-isolation: with .venv's setuptools (the dev extra's), which build checks meets
# [build-system]; an isolated build would install it anew each time
quietly "$PY" -m build --no-isolation --outdir "$work/dist" .
rm -rf dagmca.egg-info  # the sdist's by-product, which would shadow .venv's metadata here
quietly "$PY" -m twine check --strict "$work"/dist/*
wheel="$(echo "$work"/dist/*.whl)"
"$PY" - "$wheel" <<'EOF'
import sys
import zipfile

names = zipfile.ZipFile(sys.argv[1]).namelist()
stray = [n for n in names if not n.startswith(("dagmca/", "dagmca-"))]
assert not stray, f"the wheel holds more than the package (docs, tests, scripts?): {stray[:5]}"
assert "dagmca/similarity/static_model/model.safetensors" in names, "the default embedder's table is missing"
EOF

# the wheelhouse, and the fresh environment with the wheel installed into it with no
# index and no pip configuration: only the wheelhouse, at the pinned versions
wheelhouse="${DAGMCA_WHEELHOUSE:-${XDG_CACHE_HOME:-${HOME:-$root/build}/.cache}/dagmca/wheelhouse}"
quietly "$PY" scripts/wheelhouse.py "$wheel" "$wheelhouse" "$work/pins.txt"
"$PY" -m venv --without-pip "$work/venv"
quietly env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE=/dev/null \
  "$PY" -m pip --python "$work/venv/bin/python" install --no-index --find-links "$wheelhouse" \
  --constraint "$work/pins.txt" "$wheel"
"$work/venv/bin/python" - <<'EOF'
import importlib.metadata

names = {(d.metadata["Name"] or "").lower() for d in importlib.metadata.distributions()}
heavy = sorted(n for n in names if n in ("torch", "triton") or n.startswith(("nvidia-", "cuda-")))
assert not heavy, f"the light core installed {heavy}"
EOF
size="$(du -sm "$work/venv" | cut -f1)"
[ "$size" -le "$MAX_MB" ] || { echo "check_package: the installed size is $size MB, above $MAX_MB MB"; exit 1; }

# dagmca from that environment, outside the checkout, with a data folder of its own
cd "$work"
export DAGMCA_DATA_DIR="$work/data"
quietly venv/bin/dagmca --version
quietly venv/bin/dagmca doctor --llm fake --store "$work/s.db"
quietly venv/bin/dagmca run "$root/examples/free_will.txt" --llm fake -q --store "$work/s.db"
count="$(venv/bin/python -c 'import importlib.metadata as m; print(len(list(m.distributions())))')"
echo "check_package: $(basename "$wheel") and its sdist built and checked; installed alone with" \
  "$count packages in $size MB, it runs"
