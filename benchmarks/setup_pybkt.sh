#!/usr/bin/env bash
# Create a virtual environment with pyBKT's C++ build, for benchmarks/kt_vs_pybkt.py.
#
#   bash benchmarks/setup_pybkt.sh [VENV_DIR] [--pure-python PURE_VENV_DIR]
#
# VENV_DIR defaults to ./pybkt-venv.  pyBKT is installed from its source distribution so that
# its C++ extensions (E_step, predict_onestep_states, synthetic_data_helper) are compiled; this
# needs a C++ compiler.  scikit-learn is pinned below 1.8 because pyBKT.util.metrics fails to
# import with scikit-learn >= 1.8 (and pyBKT.models imports it).  --no-build-isolation makes the
# build use the numpy installed here.
#
# With --pure-python DIR, a second environment gets `pip install pyBKT` as it comes (PyPI's
# pure-Python wheel, latest dependencies); the script tries to import it and fit one small
# skill, then again after pinning scikit-learn<1.8, then numpy<2.4, printing what happens each
# time (see benchmarks/RESULTS.md for what was observed).  That environment is left with both
# pins, where the pure-Python pyBKT works.
#
# PYTHON selects the interpreter (default: python3).  The benchmark is then run as
#   PYBKT_PYTHON=VENV_DIR/bin/python python benchmarks/kt_vs_pybkt.py
set -euo pipefail

PYTHON="${PYTHON:-python3}"
VENV="./pybkt-venv"
PURE=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --pure-python)
            PURE="${2:?--pure-python needs a directory}"
            shift 2
            ;;
        -h | --help)
            sed -n '2,19p' "$0"
            exit 0
            ;;
        *)
            VENV="$1"
            shift
            ;;
    esac
done

echo "== pyBKT C++ build in $VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --upgrade pip
"$VENV/bin/pip" install setuptools wheel numpy pandas "scikit-learn<1.8"
"$VENV/bin/pip" install --no-binary pyBKT --no-build-isolation pyBKT
"$VENV/bin/python" - <<'PY'
import importlib.util

import pyBKT.models  # noqa: F401  (fails here if scikit-learn is too new)

spec = importlib.util.find_spec("pyBKT.fit.E_step")
origin = spec.origin if spec else None
if not origin or not origin.endswith(".so"):
    raise SystemExit(f"pyBKT's C++ E-step was not built (pyBKT.fit.E_step -> {origin})")
print("pyBKT C++ E-step:", origin)
PY

if [[ -z "$PURE" ]]; then
    exit 0
fi

echo "== pyBKT pure-Python wheel in $PURE"
"$PYTHON" -m venv "$PURE"
"$PURE/bin/python" -m pip install --upgrade pip
probe="$(mktemp)"
trap 'rm -f "$probe"' EXIT
cat >"$probe" <<'PY'
# Import pyBKT and fit one small skill; print what happens (a report, not a test).
import importlib.util

import numpy as np
import pandas as pd
import sklearn

print(f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, pandas {pd.__version__}")
try:
    from pyBKT.models import Model
except Exception as exc:
    print(f"import pyBKT.models: FAILED ({type(exc).__name__}: {exc})")
    raise SystemExit(0)
spec = importlib.util.find_spec("pyBKT.fit.E_step")
print("import pyBKT.models: ok; E-step:", spec.origin if spec else "none")
rng = np.random.default_rng(0)
df = pd.DataFrame(
    {
        "order_id": np.arange(2000),
        "user_id": np.repeat(np.arange(100), 20),
        "skill_name": "s",
        "correct": (rng.random(2000) < 0.6).astype(int),
    }
)
try:
    model = Model(seed=0, num_fits=1)
    model.fit(data=df)
    print("fit: ok")
except Exception as exc:
    print(f"fit: FAILED ({type(exc).__name__}: {exc})")
PY
echo "-- as published (pip install pyBKT, latest dependencies)"
"$PURE/bin/pip" install pyBKT
"$PURE/bin/python" "$probe"
echo "-- with scikit-learn < 1.8"
"$PURE/bin/pip" install "scikit-learn<1.8"
"$PURE/bin/python" "$probe"
echo "-- with scikit-learn < 1.8 and numpy < 2.4"
"$PURE/bin/pip" install "numpy<2.4"
"$PURE/bin/python" "$probe"
