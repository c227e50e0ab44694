"""One gate for data (issue 39, 2): every public function or estimator method of a protocol that
takes a table lets it in through :func:`edueval.tables.takes_tables`, so that a table from
Python is checked as a file is.

The walk: every name in each protocol's ``__all__`` whose signature takes a table (a parameter
annotated as a DataFrame, or named as the protocols name their tables) must carry the gate's
declaration (``__edueval_tables__``); each declared table is then fed

* a near miss of one of its columns (``ordr`` for ``order``),
* a table without one of its required columns,
* a wrong kind (a number, and a numpy array without column names),

and each call must end in an :class:`~edueval.io.InputError` (a ``ValueError``) -- never in
silence, never in a bare ``AttributeError``, ``KeyError`` or ``TypeError`` from inside.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any

import numpy as np
import pandas as pd
import pytest

from edueval.io import InputError
from edueval.tables import Table

PROTOCOLS = ("kt", "items", "pairwise", "qgsms", "malalgo", "turing", "tutor", "compare",
             "misconceptions")  # fmt: skip
#: parameter names the protocols give their tables
TABLE_NAMES = {"X", "data", "df", "source", "sources", "comparisons", "responses", "items",
               "questions", "choices", "phase1", "pairs", "judgements", "dialogues",
               "predictions", "scores", "abilities", "scored", "replies"}  # fmt: skip
METHODS = ("__init__", "fit", "predict", "predict_proba", "transform", "score", "log_likelihood")
#: public callables whose table-like parameters are not tables the user gives, with the reason
NOT_TABLES: dict[str, str] = {
    "edueval.misconceptions:build_problem": "params: a mal-rule's parameters (a dict)",
    "edueval.kt:Roster.__init__": "params: fitted parameters (BKTParams), checked as such",
    "edueval.kt:simulate": "params: a mapping of BKTParams or a parameter table, via read_params",
    "edueval.kt:draw_item_params": "params: a mapping of BKTParams",
    "edueval.kt:BKT.__init__": "fixed=/init=: checked at fit (scikit-learn: __init__ only stores)",
    "edueval.malalgo:read_answer": "a model's reply (ChatResult), not a table",
    "edueval.pairwise:read_rater_ids": "a list of rater ids (YAML or one per line), not a table",
    "edueval.tutor:as_dialogues": "dialogues: nested records (turns), checked by as_dialogues",
    "edueval.tutor:read_dialogues": "dialogues: nested records (turns), checked by as_dialogues",
    "edueval.tutor:reply": "dialogues: nested records (turns), checked by as_dialogues",
    "edueval.tutor:reply_targets": "dialogues: nested records (turns), checked by as_dialogues",
}


def _takes_table(fn: Any) -> bool:
    try:
        sig = inspect.signature(inspect.unwrap(fn))
    except (TypeError, ValueError):
        return False
    return any(("DataFrame" in str(p.annotation) or p.name in TABLE_NAMES)
               for p in sig.parameters.values() if p.name != "self")  # fmt: skip


def entry_points() -> list[tuple[str, Any]]:
    """``(label, callable)`` of every public function or estimator method that takes a table."""
    found = []
    for proto in PROTOCOLS:
        mod = importlib.import_module(f"edueval.{proto}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj):
                if dataclasses.is_dataclass(obj):  # results and configurations, built by edueval
                    continue
                found += [(f"edueval.{proto}:{name}.{m}", obj.__dict__[m]) for m in METHODS
                          if m in obj.__dict__ and _takes_table(obj.__dict__[m])]  # fmt: skip
            elif inspect.isfunction(obj) and (_takes_table(obj) or name.startswith("read_")):
                found.append((f"edueval.{proto}:{name}", obj))
    return [(label, fn) for label, fn in found if label not in NOT_TABLES]


ENTRY_POINTS = entry_points()


def test_every_entry_point_taking_a_table_goes_through_the_gate():
    ungated = [label for label, fn in ENTRY_POINTS if not hasattr(fn, "__edueval_tables__")]
    assert not ungated, "takes a table without @takes_tables: " + ", ".join(ungated)


def _near_miss(column: str) -> str:
    return column[:-1] if len(column) > 3 else column + "s"


def _frame(spec: Table, drop: str | None = None, rename: str | None = None) -> pd.DataFrame:
    """A one-row table with ``spec``'s columns (``drop`` left out, ``rename`` misspelt)."""
    cols = [c for c in (*spec.required, *spec.optional) if c != drop]
    row = {(_near_miss(c) if c == rename else c): ["x"] for c in cols}
    row.setdefault("note", ["x"])  # a column no table declares (never refused)
    return pd.DataFrame(row)


def _call(label: str, fn: Any, param: str, value: Any) -> None:
    """``fn`` with ``param=value``, the other declared tables one-row frames, any other
    required argument None (the gate refuses before the body runs)."""
    target = inspect.unwrap(fn)
    sig = inspect.signature(target)
    args: dict[str, Any] = {}
    for p in sig.parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in fn.__edueval_tables__:
            args[p.name] = _frame(fn.__edueval_tables__[p.name])
        elif p.default is inspect.Parameter.empty:
            args[p.name] = None
    args[param] = value
    if "." in label.split(":")[1]:  # a method: of a fitted estimator, or on a bare instance
        cls_name, method = label.split(":")[1].split(".")
        cls = getattr(importlib.import_module(label.split(":")[0]), cls_name)
        if method not in ("fit", "__init__") and cls_name in FITTED:
            instance = FITTED[cls_name]()
        else:
            instance = cls.__new__(cls)
            if hasattr(instance, "get_params"):
                instance.__dict__.update({k: v.default for k, v in inspect.signature(
                    cls.__init__).parameters.items() if k != "self"})  # fmt: skip
        fn(instance, **args)
    else:
        fn(**args)


def _fitted_irt() -> Any:
    from edueval.items import IRT, simulate_irt

    scores, _ = simulate_irt(np.ones(4), np.linspace(-1, 1, 4), n_persons=60, seed=1)
    return IRT(model="rasch").fit(scores)


def _fitted_bkt() -> Any:
    from edueval.kt import BKT, BKTParams, simulate

    data = simulate({"s1": BKTParams(0.3, 0.2, 0.2, 0.1)}, n_students=10, n_opportunities=5,
                    seed=1)  # fmt: skip
    return BKT(n_restarts=1).fit(data)


#: estimators whose other methods need a fit first (their tables are checked after it)
FITTED = {"IRT": _fitted_irt, "BKT": _fitted_bkt}


CASES = [(label, fn, param) for label, fn in ENTRY_POINTS
         for param in getattr(fn, "__edueval_tables__", {})]  # fmt: skip


def _refused(label: str, fn: Any, param: str, value: Any) -> InputError:
    try:
        _call(label, fn, param, value)
    except InputError as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - the point of the test
        raise AssertionError(f"{label}({param}=...): {type(exc).__name__} from inside: "
                             f"{exc}") from exc  # fmt: skip
    raise AssertionError(f"{label}({param}=...): accepted silently")


@pytest.mark.parametrize(("label", "fn", "param"), CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_a_wrong_kind_is_refused_naming_the_table(label, fn, param):
    spec: Table = fn.__edueval_tables__[param]
    for value in (42,) if spec.matrix else (42, np.zeros((3, 2))):
        exc = _refused(label, fn, param, value)
        assert spec.name in str(exc) and "named columns" in str(exc), str(exc)


@pytest.mark.parametrize(("label", "fn", "param"), CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_a_missing_column_is_refused(label, fn, param):
    spec: Table = fn.__edueval_tables__[param]
    if not spec.required:
        pytest.skip("no required column")
    column = spec.required[-1]
    exc = _refused(label, fn, param, _frame(spec, drop=column))
    if len(fn.__edueval_tables__) == 1:
        assert column in str(exc), str(exc)


@pytest.mark.parametrize(("label", "fn", "param"), CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_a_near_miss_column_is_refused(label, fn, param):
    spec: Table = fn.__edueval_tables__[param]
    names = [*spec.optional, *spec.required]
    if not names:
        pytest.skip("no declared column")
    column = names[0]
    exc = _refused(label, fn, param, _frame(spec, rename=column))
    if len(fn.__edueval_tables__) == 1:
        assert _near_miss(column) in str(exc) or column in str(exc), str(exc)


# -- the audit's cases ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def responses() -> pd.DataFrame:
    from edueval.kt import BKTParams, simulate

    params = {"s1": BKTParams(0.3, 0.2, 0.2, 0.1), "s2": BKTParams(0.5, 0.1, 0.15, 0.1)}
    return simulate(params, n_students=20, n_opportunities=6, seed=3)


def test_bkt_fit_refuses_a_misspelt_order_column(responses):
    """``ordr`` for ``order``: refused as ``kt fit`` refuses it, not fitted in row order."""
    from edueval.kt import BKT

    with pytest.raises(InputError, match="did you mean 'order'"):
        BKT().fit(responses.rename(columns={"order": "ordr"}))


def test_bkt_takes_records_and_structured_arrays_and_refuses_bare_arrays(responses):
    from edueval.kt import BKT

    cols = ["student", "skill", "order", "correct"]
    expected = BKT(n_restarts=2).fit(responses[cols]).params_
    records = responses[cols].to_dict("records")
    pd.testing.assert_frame_equal(BKT(n_restarts=2).fit(records).params_, expected)
    structured = responses[cols].to_records(index=False)
    pd.testing.assert_frame_equal(BKT(n_restarts=2).fit(structured).params_, expected)
    with pytest.raises(InputError, match="responses table: .* without column names"):
        BKT().fit(responses[["order", "correct"]].to_numpy())


def test_read_comparisons_takes_a_dataframe_as_the_readme_says(tmp_path):
    from edueval.pairwise import bundled_folder, import_teacher_test, read_comparisons

    data = import_teacher_test(bundled_folder() / "items.jsonl").head(40)
    path = tmp_path / "c.csv"
    data.to_csv(path, index=False)
    from_file = read_comparisons(path)
    from_frame = read_comparisons(data)
    pd.testing.assert_frame_equal(from_frame.reset_index(drop=True)[list(data.columns)],
                                  from_file.reset_index(drop=True)[list(data.columns)])  # fmt: skip
    with pytest.raises(InputError, match="did you mean 'rater'"):
        read_comparisons(data.rename(columns={"rater": "ratr"}))
