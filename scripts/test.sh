#!/usr/bin/env bash
# Installs everything the tests need, lints and checks the formatting (ruff, pyproject.toml's rules), then runs the whole test
# suite (integration and browser tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --test
.venv/bin/ruff check framework plugins tools tests
.venv/bin/ruff format --check --diff .  # the layout ruff format writes; run `ruff format .` to apply it
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAGAS_DO_NOT_TRACK=true TOKENIZERS_PARALLELISM=false
phoenix=$PWD/${PROVBENCH_PHOENIX_VENV:-.venv-phoenix}/bin/phoenix  # install.sh --test puts Phoenix there
if [ -z "${PROVBENCH_PHOENIX:-}" ] && [ -x "$phoenix" ]; then export PROVBENCH_PHOENIX=$phoenix; fi
.venv/bin/python -m pytest "$@"
# Kùzu and LadybugDB cannot share a process: the graph, view-time, view-leak and LlamaIndex-store tests again, on LadybugDB, in a process of their own.
PROVBENCH_TEST_GRAPH_STORE=ladybug exec .venv/bin/python -m pytest "$@" tests/test_kb.py tests/test_view_time.py tests/test_view_leak.py tests/test_llamaindex_store.py
