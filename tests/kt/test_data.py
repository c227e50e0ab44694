"""Packing response tables into sequences, checked against a plain pandas reference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edueval.io import InputError, read_table
from edueval.kt import _common_kernels as K
from edueval.kt import pack


def reference_sequences(df: pd.DataFrame, has_order: bool) -> dict[tuple[str, str], list[int]]:
    """(skill, student) -> row positions in practice order, computed with pandas alone."""
    d = df.reset_index(drop=True).assign(
        _pos=np.arange(len(df)),
        _skill=df["skill"].astype(str).to_numpy(),
        _student=df["student"].astype(str).to_numpy(),
    )
    keys = ["_pos"] if not has_order else ["order", "_pos"]
    out = {}
    for (skill, student), g in d.groupby(["_skill", "_student"], sort=False):
        out[(skill, student)] = g.sort_values(keys, kind="stable")["_pos"].tolist()
    return out


def check_against_reference(df: pd.DataFrame, has_order: bool) -> None:
    seqs, _ = pack(df)
    ref = reference_sequences(df, has_order)
    assert list(seqs.skills) == sorted({k for k, _ in ref})
    assert seqs.n_sequences == len(ref)
    got = {}
    for s in range(seqs.n_sequences):
        lo, hi = seqs.starts[s], seqs.starts[s + 1]
        key = (str(seqs.skills[seqs.seq_skill[s]]), str(seqs.students[s]))
        assert key not in got
        got[key] = seqs.row[lo:hi].tolist()
        np.testing.assert_array_equal(seqs.opportunity[lo:hi], np.arange(1, hi - lo + 1))
    assert got == ref
    assert np.all(np.diff(seqs.seq_skill) >= 0)
    for k in range(len(seqs.skills)):
        assert set(seqs.seq_skill[seqs.skill_starts[k] : seqs.skill_starts[k + 1]]) == {k}
    np.testing.assert_array_equal(seqs.obs, df["correct"].to_numpy()[seqs.row])
    np.testing.assert_array_equal(seqs.unpack(seqs.obs), df["correct"].to_numpy())


ID_KINDS = ["object", "string", "int", "category"]


def as_kind(values: list[int], prefix: str, kind: str) -> pd.Series:
    if kind == "int":
        return pd.Series(values, dtype="int64")
    text = [f"{prefix}{v}" for v in values]
    if kind == "object":
        return pd.Series(text, dtype=object)
    if kind == "string":
        return pd.Series(text, dtype="string")
    return pd.Series(text, dtype="category")


@st.composite
def tables(draw):
    n = draw(st.integers(1, 60))
    students = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    skills = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    correct = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    order_kind = draw(st.sampled_from(["none", "int", "float", "wide", "huge"]))
    df = pd.DataFrame(
        {
            "student": as_kind(students, "u", draw(st.sampled_from(ID_KINDS))),
            "skill": as_kind(skills, "s", draw(st.sampled_from(ID_KINDS))),
            "correct": correct,
        }
    )
    if order_kind != "none":
        # distinct values, so that no sequence has a tie
        order = np.array(draw(st.permutations(range(n))), dtype=float)
        if order_kind == "float":
            order = order / 3.0 - 7.25
        elif order_kind == "wide":
            order = order * 1e15 + 1  # beyond float's exact integers when added to the group
        elif order_kind == "huge":
            order = order * 1e17  # too wide for one int64 key: sorted by both keys
        df["order"] = order
    return df, order_kind != "none"


@settings(max_examples=300, deadline=None)
@given(tables())
def test_pack_matches_pandas_reference(table):
    df, has_order = table
    check_against_reference(df, has_order)


def test_pack_negative_and_large_integer_orders():
    df = pd.DataFrame(
        {
            "student": ["a", "a", "b", "a", "b"],
            "skill": ["x"] * 5,
            "correct": [1, 0, 1, 1, 0],
            "order": [2**40, -(2**40), 5, 0, -3],
        }
    )
    check_against_reference(df, has_order=True)
    seqs, _ = pack(df)
    assert seqs.row.tolist() == [1, 3, 0, 4, 2]


def from_csv(tmp_path, text: str) -> pd.DataFrame:
    path = tmp_path / "responses.csv"
    path.write_text(text, encoding="utf-8")
    return read_table(path, text_columns={"student", "skill"})


@pytest.mark.parametrize("kind", ["object", "string", "string_na"])
def test_missing_identifier_is_refused(kind):
    dtype = {"object": object, "string": "string", "string_na": pd.StringDtype(na_value=np.nan)}
    df = pd.DataFrame(
        {
            "student": pd.Series(["u1", None, "u2"], dtype=dtype[kind]),
            "skill": ["s", "s", "s"],
            "correct": [0, 1, 1],
        }
    )
    with pytest.raises(InputError, match="empty cell") as err:
        pack(df)
    assert err.value.column == "student"


@pytest.mark.parametrize("column", ["student", "skill"])
def test_missing_or_blank_identifier_names_its_line(tmp_path, column):
    rows = {"student": "u1,s,1\n,s,0\n", "skill": "u1,s,1\nu2,  ,0\n"}[column]
    df = from_csv(tmp_path, "student,skill,correct\n" + rows)
    with pytest.raises(InputError, match="empty cell") as err:
        pack(df)
    assert (err.value.line, err.value.column) == (3, column)


@pytest.mark.parametrize("order", ["3,1,3", "3.5,1,3.5", "3e17,1,3e17"])
def test_tied_order_names_both_lines(tmp_path, order):
    o = order.split(",")
    text = "student,skill,correct,order\n" + "".join(f"u,s,{i % 2},{o[i]}\n" for i in range(3))
    with pytest.raises(InputError, match=r"same order .*\(the other is line 2\)") as err:
        pack(from_csv(tmp_path, text))
    assert (err.value.line, err.value.column) == (4, "order")


def test_tied_order_in_memory_names_rows():
    df = pd.DataFrame(
        {
            "student": ["u", "u", "u"],
            "skill": ["s", "s", "s"],
            "correct": [0, 1, 1],
            "order": [3, 1, 3],
        }
    )
    with pytest.raises(
        InputError, match=r"student 'u' on skill 's' have the same order 3 \(the other is row 0\)"
    ):
        pack(df)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 2**40), min_size=0, max_size=300),
    st.sampled_from([1, 3, 2**11, 2**40 + 1]),
)
def test_radix_argsort_is_numpys_stable_argsort(values, modulus):
    key = np.array(values, dtype=np.int64) % modulus  # small moduli: many equal keys
    bits = int(key.max()).bit_length() if len(key) else 0
    perm, sorted_key = K.radix_argsort(key, bits)
    np.testing.assert_array_equal(perm, np.argsort(key, kind="stable"))
    np.testing.assert_array_equal(sorted_key, np.sort(key))
    perm, sorted_key = K.radix_argsort(np.sort(key), bits)  # already in order
    np.testing.assert_array_equal(perm, np.arange(len(key)))


def test_rows_already_in_sequence_order_keep_their_positions():
    df = pd.DataFrame(
        {
            "student": ["a", "a", "b", "b", "b"],
            "skill": ["x", "x", "x", "x", "y"],
            "correct": [1, 0, 1, 1, 0],
            "order": [1, 2, 1, 5, 9],
        }
    )
    seqs, _ = pack(df)
    assert seqs.row.tolist() == [0, 1, 2, 3, 4]
    assert seqs.starts.tolist() == [0, 2, 4, 5]


def test_empty_table_is_refused():
    df = pd.DataFrame({"student": [], "skill": [], "correct": [], "order": []})
    with pytest.raises(InputError, match="no responses"):
        pack(df)
