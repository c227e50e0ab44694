#!/bin/bash
# kt fit of a 4 M-response Parquet dataset, an anchor source tree vs this one, alternating.
# Usage: benchmarks/dataset_checks.sh ANCHOR_SRC [ROUNDS]   (ANCHOR_SRC: e.g. a `git archive` of
# the base commit's src/, unpacked); prints each run's wall time and timing.count_pass_wall.
set -euo pipefail
anchor=${1:?give the src folder of the anchor tree}
rounds=${2:-2}
here=$(cd "$(dirname "$0")/.." && pwd)/src
work=$(mktemp -d)
PYTHONPATH=$here python -m edueval kt simulate --format parquet --students 20000 --skills 20 \
  --opportunities 10 --seed 1 --out "$work/sim" >/dev/null
for round in $(seq "$rounds"); do
  for tree in "$anchor" "$here"; do
    rm -rf "$work/fit"
    s=$(date +%s.%N)
    PYTHONPATH=$tree python -m edueval kt fit "$work/sim/responses" --restarts 1 --max-iter 20 \
      --out "$work/fit" >/dev/null
    e=$(date +%s.%N)
    c=$(python -c 'import json, sys; print(json.load(open(sys.argv[1]))["timing"]["count_pass_wall"])' "$work/fit/results.json")
    wall=$(python -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))' "$s" "$e")
    echo "round $round $tree wall $wall count_pass $c"
  done
done
rm -rf "$work"
