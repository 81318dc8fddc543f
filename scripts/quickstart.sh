#!/usr/bin/env bash
# Installs provbench and runs the default suite on the embedded local model; prints where the report is.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAGAS_DO_NOT_TRACK=true TOKENIZERS_PARALLELISM=false
exec .venv/bin/provbench run suites/quickstart.yaml "$@"
