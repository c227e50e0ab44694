"""Completeness per group (issue 39, 3): a long parameter file is checked for every group it
gives, before anything is predicted."""

from __future__ import annotations

import pandas as pd
import pytest

from edueval.io import InputError
from edueval.kt.bkt.variants import read_param_file


def _long(drop: tuple[str, str] | None = None) -> pd.DataFrame:
    rows = [("s", "prior", "*", 0.3), ("s", "learn", "*", 0.1), ("s", "forget", "*", 0.0)]
    for item, (g, sl) in {"item=s-1": (0.2, 0.1), "item=s-2": (0.25, 0.15)}.items():
        rows += [("s", "guess", item, g), ("s", "slip", item, sl)]
    df = pd.DataFrame(rows, columns=["skill", "parameter", "group", "value"])
    if drop is not None:
        df = df[~((df["parameter"] == drop[0]) & (df["group"] == drop[1]))]
    return df.reset_index(drop=True)


def test_a_complete_per_item_file_is_read() -> None:
    out = read_param_file(_long())
    assert set(out["group"]) == {"*", "item=s-1", "item=s-2"}


@pytest.mark.parametrize("drop", [("guess", "item=s-2"), ("slip", "item=s-1")])
def test_one_items_guess_or_slip_missing_is_refused(drop) -> None:
    other = "slip" if drop[0] == "guess" else "guess"
    with pytest.raises(InputError, match=f"no '{drop[0]}' for skill 's' in group '{drop[1]}', "
                                         f"which has '{other}'"):  # fmt: skip
        read_param_file(_long(drop))


def test_kt_predict_refuses_it_in_one_line(cli, tmp_path) -> None:
    params = tmp_path / "params.csv"
    _long(("guess", "item=s-2")).to_csv(params, index=False)
    data = tmp_path / "data.csv"
    data.write_text("student,skill,item,correct\na,s,s-1,1\na,s,s-2,0\n")
    res = cli("kt", "predict", data, "--params", params, "--out", tmp_path / "pr")
    assert res.code == 2 and len(res.err_lines) == 1, res
    assert "no 'guess' for skill 's' in group 'item=s-2'" in res.err
    assert not (tmp_path / "pr" / "results.json").exists()
