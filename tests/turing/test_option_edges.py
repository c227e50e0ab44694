"""Option values that used to end in tracebacks (issue 39, point 10): each is one line, exit 2,
and no run folder is made."""

from __future__ import annotations

import math

import pytest

from edueval.io import InputError
from edueval.turing.coverage import coverage_plan, students_needed


@pytest.mark.parametrize(
    "args, flag",
    [
        (("power", "--eps", ""), "--eps"),
        (("power", "--delta", " , "), "--delta"),
        (("power", "--rho", ","), "--rho"),
        (("simulate", "--sizes", ""), "--sizes"),
        (("simulate", "--p-rules", ""), "--p-rules"),
    ],
)
def test_an_empty_list_is_refused_by_name(cli, tmp_path, args, flag):
    out = tmp_path / "run"
    res = cli("turing", *args, "--out", out)
    assert res.code == 2
    assert flag in res.err and "at least one value" in res.err
    assert "Traceback" not in res.err
    assert not out.exists()


def test_students_needed_for_a_tiny_p_min_is_finite_and_matches_the_closed_form():
    # 1 - (1 - p)^r rounds to 0 in floating point for p = 1e-300; log1p/expm1 keep it exact:
    # pi = r * p to first order, so n = ceil(ln(k / delta) / (r * p))
    n = students_needed(10, 1e-300, 0.05, per_student=2)
    assert n == math.ceil(math.log(10 / 0.05) / 2e-300)
    # and it agrees with the direct form where that form is exact
    assert students_needed(10, 0.05, 0.05, per_student=2) == math.ceil(
        math.log(10 / 0.05) / (1 - 0.95**2)
    )


def test_a_simulation_too_large_to_allocate_is_refused_before_it_starts(cli, tmp_path):
    with pytest.raises(InputError, match=r"p_min= 1e-300 needs 5\.\d+e\+300 students"):
        coverage_plan(k=10, p_min=1e-300, confidence=0.95, reps=10)
    # the bound alone needs no simulation
    assert coverage_plan(k=10, p_min=1e-300, confidence=0.95, reps=0).students > 1e300
    out = tmp_path / "run"
    res = cli("turing", "power", "--coverage", "--p-min", "1e-300", "--out", out)
    assert res.code == 2 and len(res.err_lines) == 1
    assert "--p-min" in res.err and "too many to check by simulation" in res.err
    assert not out.exists()
