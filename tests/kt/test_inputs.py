"""Bad input to ``kt fit``, ``kt predict`` and ``kt evaluate``.

Every bad input must end with exit code 2 and exactly one line on stderr, ``error: FILE[, line N]
[, column 'C']: what was expected`` -- never a traceback -- and must leave nothing in ``--out``
that looks like a finished run (no results.json).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from edueval.io import InputError
from edueval.kt.bkt.model import simulate

COMMANDS = ("fit", "predict", "evaluate")

HEADER = "student,skill,order,correct,known,p_correct,p_known"


def good_rows(skills=("A", "B"), n_students=4, n_opportunities=5) -> list[str]:
    """Rows of a valid response file (also valid input to evaluate: p_correct, p_known present).

    With the defaults each skill has 20 responses, enough for ``kt fit`` (--min-responses 10).
    """
    rows = []
    for skill in skills:
        for s in range(n_students):
            for t in range(1, n_opportunities + 1):
                correct = int((s + t + len(skill)) % 3 != 0)
                known = int(t > s)
                rows.append(f"s{s},{skill},{t},{correct},{known},0.6,0.{t}")
    return rows


def csv_text(rows: list[str], header: str = HEADER) -> str:
    return "\n".join([header, *rows]) + "\n"


def with_row(position: int, row: str) -> str:
    """A valid CSV whose data row ``position`` (0-based; on line position + 2) is replaced."""
    rows = good_rows()
    rows[position] = row
    return csv_text(rows)


PARAMS_AB = "skill,prior,learn,guess,slip\nA,0.3,0.2,0.2,0.1\nB,0.4,0.1,0.25,0.15\n"


@pytest.fixture
def params_ab(write) -> Path:
    return write("params_ab.csv", PARAMS_AB)


def kt_args(command: str, data: Path, out: Path, params: Path) -> list[object]:
    if command == "predict":
        return ["kt", "predict", data, "--params", params, "--out", out]
    return ["kt", command, data, "--out", out]


def assert_input_error(
    res,
    out: Path,
    *,
    file: Path,
    line: int | None = None,
    column: str | None = None,
    contains: tuple[str, ...] = (),
) -> str:
    """Exit 2, one stderr line ``error: FILE[, line N][, column 'C']: ...``, no results.json."""
    assert res.code == 2, res.err
    assert "Traceback" not in res.err
    assert len(res.err_lines) == 1, f"expected one line on stderr, got:\n{res.err}"
    msg = res.err_lines[0]
    assert msg.startswith(f"error: {file}"), msg
    where = msg[len(f"error: {file}") :].split(": ", 1)[0]
    if line is None:
        assert "line" not in where, msg
    else:
        assert re.search(rf"\bline {line}\b", where), msg
    if column is not None:
        assert f"column '{column}'" in msg, msg
    for text in contains:
        assert text in msg, msg
    assert not (out / "results.json").exists(), "a failed run left a results.json"
    config = out / "config.json"
    if config.exists():
        assert json.loads(config.read_text())["status"] != "complete"
    return msg


# --------------------------------------------------------------------------------------------
# bad response files: the same error from all three commands
# --------------------------------------------------------------------------------------------

# name -> (file name, content, expected line, expected column, text the message must contain)
BAD_DATA = {
    "missing column": (
        "data.csv",
        csv_text(
            [r.split(",", 2)[0] + "," + r.split(",", 2)[2] for r in good_rows()],
            header="student,order,correct,known,p_correct,p_known",
        ),
        None,
        None,
        ("missing column 'skill'", "student, order, correct"),
    ),
    "correct is 2": (
        "data.csv",
        with_row(1, "s0,A,2,2,1,0.6,0.2"),
        3,
        "correct",
        ("0 or 1", "got 2"),
    ),
    "correct is yes": (
        "data.csv",
        with_row(6, "s1,A,2,yes,1,0.6,0.2"),
        8,
        "correct",
        ("0 or 1", "'yes'"),
    ),
    "correct is 0.5": (
        "data.csv",
        with_row(3, "s0,A,4,0.5,1,0.6,0.4"),
        5,
        "correct",
        ("0 or 1", "0.5"),
    ),
    "correct empty": (
        "data.csv",
        with_row(2, "s0,A,3,,1,0.6,0.3"),
        4,
        "correct",
        ("empty",),
    ),
    "correct NaN": (  # only an empty cell is missing; the text NaN is a bad value
        "data.csv",
        with_row(4, "s0,A,5,NaN,1,0.6,0.5"),
        6,
        "correct",
        ("got 'NaN'",),
    ),
    "student empty": (
        "data.csv",
        with_row(7, ",A,3,1,1,0.6,0.3"),
        9,
        "student",
        ("empty",),
    ),
    "student whitespace": (
        "data.csv",
        with_row(7, "   ,A,3,1,1,0.6,0.3"),
        9,
        "student",
        ("empty",),
    ),
    "skill empty": (
        "data.csv",
        with_row(12, "s2,,3,1,1,0.6,0.3"),
        14,
        "skill",
        ("empty",),
    ),
    "empty file": ("data.csv", "", None, None, ("empty",)),
    "header only": ("data.csv", HEADER + "\n", None, None, ("no data rows",)),
    "unknown extension": ("data.xlsx", csv_text(good_rows()), None, None, ("'.xlsx'", ".csv")),
    "no extension": ("data", csv_text(good_rows()), None, None, ("unknown file type",)),
    "malformed JSONL": (
        "data.jsonl",
        '{"student": "s0", "skill": "A", "correct": 1, "p_correct": 0.5}\n'
        '{"student": "s0", "skill": "A", "correct": 0, "p_correct": 0.5}\n'
        '{"student": "s0", "skill": "A", "correct": 1, \n'
        '{"student": "s0", "skill": "A", "correct": 1, "p_correct": 0.5}\n',
        3,
        None,
        ("not valid JSON",),
    ),
    "JSONL line not an object": (
        "data.jsonl",
        '{"student": "s0", "skill": "A", "correct": 1, "p_correct": 0.5}\n[1, 2, 3]\n',
        2,
        None,
        ("JSON object",),
    ),
    "JSONL bad value": (
        "data.jsonl",
        '{"student": "s0", "skill": "A", "correct": 1, "p_correct": 0.5}\n'
        '{"student": "s0", "skill": "A", "correct": "maybe", "p_correct": 0.5}\n',
        2,
        "correct",
        ("'maybe'",),
    ),
    "duplicate order": (
        "data.csv",
        # line 5 (row 3) repeats order 2 of student s0 on skill A, first seen on line 3
        with_row(3, "s0,A,2,1,1,0.6,0.4"),
        5,
        "order",
        ("same order 2", "line 3", "student 's0'", "skill 'A'"),
    ),
    "order not a number": (
        "data.csv",
        with_row(5, "s1,A,first,1,1,0.6,0.4"),
        7,
        "order",
        ("a number", "'first'"),
    ),
    "ragged CSV": (
        "data.csv",
        with_row(5, "s1,A,1,1,1,0.6,0.4,extra,cells"),
        7,
        None,
        ("cannot parse as CSV",),
    ),
    "not UTF-8": (
        "data.csv",
        (HEADER + "\n\xe9,A,1,1,1,0.5,0.5\n").encode("latin-1"),
        None,
        None,
        ("UTF-8",),
    ),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", list(BAD_DATA))
def test_bad_response_file(cli, write, tmp_path, params_ab, command, case):
    name, content, line, column, contains = BAD_DATA[case]
    data = write(name, content)
    out = tmp_path / "out"
    res = cli(*kt_args(command, data, out, params_ab))
    assert_input_error(res, out, file=data, line=line, column=column, contains=contains)


@pytest.mark.parametrize("command", COMMANDS)
def test_file_that_does_not_exist(cli, tmp_path, params_ab, command):
    data = tmp_path / "no_such_file.csv"
    out = tmp_path / "out"
    res = cli(*kt_args(command, data, out, params_ab))
    assert_input_error(res, out, file=data, contains=("not found",))
    assert not out.exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_directory_instead_of_file(cli, tmp_path, params_ab, command):
    data = tmp_path / "folder.csv"
    data.mkdir()
    out = tmp_path / "out"
    res = cli(*kt_args(command, data, out, params_ab))
    assert_input_error(res, out, file=data, contains=("directory",))


@pytest.mark.parametrize("command", COMMANDS)
def test_configured_column_name_missing(cli, write, tmp_path, params_ab, command):
    data = write("data.csv", csv_text(good_rows()))
    out = tmp_path / "out"
    res = cli(*kt_args(command, data, out, params_ab), "--col-student", "learner")
    assert_input_error(res, out, file=data, contains=("missing column 'learner'",))


@pytest.mark.parametrize("command", COMMANDS)
def test_configured_column_names_are_used(cli, write, tmp_path, params_ab, command):
    text = csv_text(good_rows()).replace("student,skill,order,correct", "who,kc,step,right", 1)
    data = write("data.csv", text)
    out = tmp_path / "out"
    res = cli(
        *kt_args(command, data, out, params_ab),
        *("--col-student", "who", "--col-skill", "kc", "--col-order", "step"),
        *("--col-correct", "right"),
    )
    assert res.code == 0, res.err
    assert json.loads((out / "config.json").read_text())["params"]["columns"]["student"] == "who"


# --------------------------------------------------------------------------------------------
# kt fit: skills that are too small
# --------------------------------------------------------------------------------------------


def test_fit_skips_skill_with_single_response(cli, write, tmp_path):
    data = write("data.csv", csv_text(good_rows(skills=("A",)) + ["s9,B,1,1,1,0.6,0.1"]))
    out = tmp_path / "out"
    res = cli("kt", "fit", data, "--out", out)
    assert res.code == 0, res.err
    warnings = [ln for ln in res.err_lines if ln.startswith("warning:")]
    assert len(warnings) == 1, res.err
    assert "B" in warnings[0] and "fewer than 10" in warnings[0]
    results = json.loads((out / "results.json").read_text())
    assert results["skipped_skills"] == ["B"]
    assert results["n_skills"] == 1
    assert results["n_responses"] == 20
    fitted = pd.read_csv(out / "params.csv")
    assert fitted["skill"].astype(str).tolist() == ["A"]
    assert json.loads((out / "config.json").read_text())["status"] == "complete"


def test_fit_min_responses_option(cli, write, tmp_path):
    data = write("data.csv", csv_text(good_rows(skills=("A",)) + ["s9,B,1,1,1,0.6,0.1"]))
    out = tmp_path / "out"
    res = cli("kt", "fit", data, "--out", out, "--min-responses", "1")
    assert res.code == 0, res.err
    assert not [ln for ln in res.err_lines if ln.startswith("warning:")]
    results = json.loads((out / "results.json").read_text())
    assert results["skipped_skills"] == []
    assert sorted(pd.read_csv(out / "params.csv")["skill"].astype(str)) == ["A", "B"]


def test_fit_all_skills_too_small(cli, write, tmp_path):
    data = write("data.csv", csv_text(good_rows(n_students=1, n_opportunities=3)))
    out = tmp_path / "out"
    res = cli("kt", "fit", data, "--out", out)
    assert_input_error(res, out, file=data, contains=("fewer than 10", "--min-responses"))


def test_fit_all_skills_too_small_for_option(cli, write, tmp_path):
    data = write("data.csv", csv_text(good_rows()))
    out = tmp_path / "out"
    res = cli("kt", "fit", data, "--out", out, "--min-responses", "21")
    assert_input_error(res, out, file=data, contains=("fewer than 21",))


@pytest.mark.parametrize(
    "option",
    [("--guess-max", "0"), ("--slip-max", "1.5"), ("--restarts", "0"), ("--tol", "-1")],
)
def test_fit_bad_option_is_one_line(cli, write, tmp_path, option):
    data = write("data.csv", csv_text(good_rows()))
    out = tmp_path / "out"
    res = cli("kt", "fit", data, "--out", out, *option)
    assert res.code == 2, res.err
    # one line, or (a value outside the option's declared range) Click's usage block ending in it
    assert [ln for ln in res.err_lines if ln.lower().startswith("error")] == res.err_lines[-1:]
    assert option[0] in res.err_lines[-1]
    assert not (out / "results.json").exists()


# --------------------------------------------------------------------------------------------
# row order: rows are sorted by `order` within student x skill
# --------------------------------------------------------------------------------------------


def _sorted_and_shuffled(
    *, drop_order: bool, df: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A response table in sequence order and the same rows shuffled.

    With ``drop_order`` (the file will have no ``order`` column, so file order within student x
    skill is the order) the sequences are interleaved but each keeps its responses in order.
    """
    if df is None:
        rows = good_rows(skills=("A", "B", "C"), n_students=6, n_opportunities=8)
        df = pd.read_csv(io.StringIO(csv_text(rows)))
    gen = np.random.default_rng(7)
    if drop_order:
        key = pd.Series(gen.random(len(df)))
        seq = df["student"] + "/" + df["skill"]
        key = key.groupby(seq).transform(lambda k: np.sort(k.to_numpy()))
        shuffled = df.iloc[np.argsort(key.to_numpy(), kind="stable")].reset_index(drop=True)
    else:
        shuffled = df.iloc[gen.permutation(len(df))].reset_index(drop=True)
    assert not shuffled[["student", "skill"]].equals(df[["student", "skill"]])
    return df, shuffled


@pytest.mark.parametrize("drop_order", [False, True], ids=["order column", "file order"])
def test_shuffled_rows_give_same_predictions(cli, write, tmp_path, drop_order):
    df, shuffled = _sorted_and_shuffled(drop_order=drop_order)
    keys = ["student", "skill", "order"]
    params = write("params.csv", PARAMS_AB + "C,0.2,0.3,0.1,0.2\n")
    preds = {}
    for name, frame in (("sorted", df), ("shuffled", shuffled)):
        written = frame.drop(columns=["p_correct", "p_known"])
        if drop_order:
            written = written.drop(columns=["order"])
        data = tmp_path / f"{name}.csv"
        written.to_csv(data, index=False)
        out = tmp_path / f"out_{name}"
        res = cli("kt", "predict", data, "--params", params, "--out", out)
        assert res.code == 0, res.err
        pred = pd.read_csv(out / "predictions.csv")
        # predictions come back in the input file's row order
        pd.testing.assert_frame_equal(pred[written.columns], written.reset_index(drop=True))
        pred[keys] = frame[keys].to_numpy()  # the key of every row (order may not be in the file)
        preds[name] = pred
    a = preds["sorted"].set_index(keys).loc[preds["shuffled"].set_index(keys).index]
    b = preds["shuffled"].set_index(keys)
    np.testing.assert_array_equal(a["p_correct"].to_numpy(), b["p_correct"].to_numpy())
    np.testing.assert_array_equal(a["p_known"].to_numpy(), b["p_known"].to_numpy())
    # and the order matters: the first opportunity of each sequence is predicted from the prior
    first = preds["sorted"][preds["sorted"]["order"] == 1]
    prior = first["skill"].map({"A": 0.3, "B": 0.4, "C": 0.2})
    guess = first["skill"].map({"A": 0.2, "B": 0.25, "C": 0.1})
    slip = first["skill"].map({"A": 0.1, "B": 0.15, "C": 0.2})
    np.testing.assert_allclose(first["p_correct"], prior * (1 - slip) + (1 - prior) * guess)


def test_shuffled_rows_give_same_fit(cli, tmp_path):
    truth = pd.DataFrame(
        {"prior": [0.3, 0.5], "learn": [0.2, 0.1], "guess": [0.2, 0.3], "slip": [0.1, 0.15]},
        index=pd.Index(["A", "B"], name="skill"),
    )
    simulated = simulate(truth, n_students=60, n_opportunities=10, seed=3)
    df, shuffled = _sorted_and_shuffled(drop_order=False, df=simulated)
    fitted = {}
    for name, frame in (("sorted", df), ("shuffled", shuffled)):
        data = tmp_path / f"{name}.csv"
        frame.to_csv(data, index=False)
        res = cli("kt", "fit", data, "--out", tmp_path / f"fit_{name}")
        assert res.code == 0, res.err
        fitted[name] = pd.read_csv(tmp_path / f"fit_{name}" / "params.csv").set_index("skill")
    cols = ["prior", "learn", "guess", "slip", "log_likelihood"]
    np.testing.assert_allclose(
        fitted["shuffled"][cols].to_numpy(), fitted["sorted"][cols].to_numpy(), rtol=1e-6, atol=1e-9
    )


# --------------------------------------------------------------------------------------------
# kt predict: the parameter file
# --------------------------------------------------------------------------------------------


@pytest.fixture
def data_ab(write) -> Path:
    return write("data.csv", csv_text(good_rows()))


def test_predict_unknown_skill_in_params(cli, write, tmp_path, data_ab):
    params = write("params.csv", PARAMS_AB + "Z,0.3,0.2,0.2,0.1\n")
    out = tmp_path / "out"
    res = cli("kt", "predict", data_ab, "--params", params, "--out", out)
    assert_input_error(res, out, file=params, column="skill", contains=("unknown skill 'Z'",))
    assert not out.exists()


def test_predict_data_skill_missing_from_params(cli, write, tmp_path, data_ab):
    params = write("params.csv", "skill,prior,learn,guess,slip\nA,0.3,0.2,0.2,0.1\n")
    out = tmp_path / "out"
    res = cli("kt", "predict", data_ab, "--params", params, "--out", out)
    msg = assert_input_error(res, out, file=params, contains=("'B'",))
    assert "np.str_" not in msg


@pytest.mark.parametrize(
    ("row", "line", "column", "shown"),
    [
        ("B,0.4,1.2,0.25,0.15", 3, "learn", "1.2"),
        ("B,-0.1,0.1,0.25,0.15", 3, "prior", "-0.1"),
        ("B,0.4,0.1,0.25,", 3, "slip", "empty"),
        ("B,0.4,0.1,high,0.15", 3, "guess", "'high'"),
    ],
)
def test_predict_params_out_of_range(cli, write, tmp_path, data_ab, row, line, column, shown):
    params = write("params.csv", "skill,prior,learn,guess,slip\nA,0.3,0.2,0.2,0.1\n" + row + "\n")
    out = tmp_path / "out"
    res = cli("kt", "predict", data_ab, "--params", params, "--out", out)
    assert_input_error(
        res, out, file=params, line=line, column=column, contains=("[0.0, 1.0]", shown)
    )


def test_predict_forget_out_of_range(cli, write, tmp_path, data_ab):
    params = write(
        "params.csv",
        "skill,prior,learn,guess,slip,forget\nA,0.3,0.2,0.2,0.1,0\nB,0.4,0.1,0.25,0.15,2\n",
    )
    out = tmp_path / "out"
    res = cli("kt", "predict", data_ab, "--params", params, "--out", out)
    assert_input_error(res, out, file=params, line=3, column="forget")


def test_predict_params_missing_column(cli, write, tmp_path, data_ab):
    params = write("params.csv", "skill,prior,learn,guess\nA,0.3,0.2,0.2\nB,0.4,0.1,0.25\n")
    out = tmp_path / "out"
    res = cli("kt", "predict", data_ab, "--params", params, "--out", out)
    assert_input_error(res, out, file=params, contains=("missing column 'slip'",))


def test_predict_params_duplicate_skill(cli, write, tmp_path, data_ab):
    params = write("params.csv", PARAMS_AB + "A,0.3,0.2,0.2,0.1\n")
    out = tmp_path / "out"
    res = cli("kt", "predict", data_ab, "--params", params, "--out", out)
    assert_input_error(res, out, file=params, line=4, contains=("duplicate skill", "'A'"))


def test_predict_params_file_missing(cli, tmp_path, data_ab):
    params = tmp_path / "nope.csv"
    out = tmp_path / "out"
    res = cli("kt", "predict", data_ab, "--params", params, "--out", out)
    assert_input_error(res, out, file=params, contains=("not found",))


def test_predict_params_as_jsonl(cli, write, tmp_path, data_ab):
    params = write(
        "params.jsonl",
        '{"skill": "A", "prior": 0.3, "learn": 0.2, "guess": 0.2, "slip": 0.1}\n'
        '{"skill": "B", "prior": 0.4, "learn": 0.1, "guess": 0.25, "slip": 1.5}\n',
    )
    out = tmp_path / "out"
    res = cli("kt", "predict", data_ab, "--params", params, "--out", out)
    assert_input_error(res, out, file=params, line=2, column="slip")


# --------------------------------------------------------------------------------------------
# kt evaluate: the prediction columns
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "line", "column", "shown"),
    [
        ("s0,A,2,1,1,1.5,0.2", 3, "p_correct", "1.5"),
        ("s0,A,2,1,1,,0.2", 3, "p_correct", "empty"),
        ("s0,A,2,1,1,0.5,-0.2", 3, "p_known", "-0.2"),
        ("s0,A,2,1,1,0.5,NaN", 3, "p_known", "'NaN'"),  # only an empty cell is missing
    ],
)
def test_evaluate_bad_probability(cli, write, tmp_path, row, line, column, shown):
    data = write("pred.csv", with_row(1, row))
    out = tmp_path / "out"
    res = cli("kt", "evaluate", data, "--out", out)
    assert_input_error(res, out, file=data, line=line, column=column, contains=(shown,))


def test_evaluate_without_p_correct(cli, write, tmp_path):
    rows = [",".join(r.split(",")[:5]) for r in good_rows()]
    data = write("pred.csv", csv_text(rows, header="student,skill,order,correct,known"))
    out = tmp_path / "out"
    res = cli("kt", "evaluate", data, "--out", out)
    assert_input_error(res, out, file=data, contains=("missing column 'p_correct'",))


def test_evaluate_without_known_has_no_knowledge_metrics(cli, write, tmp_path):
    rows = [",".join(r.split(",")[:4] + r.split(",")[5:6]) for r in good_rows()]
    data = write("pred.csv", csv_text(rows, header="student,skill,order,correct,p_correct"))
    out = tmp_path / "out"
    res = cli("kt", "evaluate", data, "--out", out)
    assert res.code == 0, res.err
    results = json.loads((out / "results.json").read_text())
    assert "performance" in results
    assert "knowledge" not in results and "moment_of_learning" not in results


@pytest.mark.parametrize(
    ("option", "value"), [("--threshold", "1"), ("--threshold", "0"), ("--in-a-row", "0")]
)
def test_evaluate_bad_option_is_one_line(cli, write, tmp_path, option, value):
    data = write("pred.csv", csv_text(good_rows()))
    out = tmp_path / "out"
    res = cli("kt", "evaluate", data, "--out", out, option, value)
    assert res.code == 2, res.err
    # one line, or (a value outside the option's declared range) Click's usage block ending in it
    assert [ln for ln in res.err_lines if ln.lower().startswith("error")] == res.err_lines[-1:]
    assert option in res.err_lines[-1]


# --------------------------------------------------------------------------------------------
# pyBKT's column names
# --------------------------------------------------------------------------------------------


def test_pybkt_column_names_accepted(cli, write, tmp_path, params_ab):
    standard = csv_text(good_rows())
    pybkt = standard.replace("student,skill,order,", "user_id,skill_name,order_id,", 1)
    data_std = write("standard.csv", standard)
    data_py = write("pybkt.csv", pybkt)
    outs = {}
    for name, data in (("std", data_std), ("py", data_py)):
        for command in COMMANDS:
            out = tmp_path / f"{command}_{name}"
            res = cli(*kt_args(command, data, out, params_ab))
            assert res.code == 0, res.err
            outs[command, name] = out
    cols = json.loads((outs["fit", "py"] / "config.json").read_text())["params"]["columns"]
    assert (cols["student"], cols["skill"], cols["order"]) == ("user_id", "skill_name", "order_id")
    # same numbers whatever the names
    pred_std = pd.read_csv(outs["predict", "std"] / "predictions.csv")
    pred_py = pd.read_csv(outs["predict", "py"] / "predictions.csv")
    assert list(pred_py.columns[:3]) == ["user_id", "skill_name", "order_id"]
    np.testing.assert_array_equal(pred_py["p_correct"], pred_std["p_correct"])
    np.testing.assert_array_equal(pred_py["p_known"], pred_std["p_known"])
    fit_std = pd.read_csv(outs["fit", "std"] / "params.csv")
    fit_py = pd.read_csv(outs["fit", "py"] / "params.csv")
    pd.testing.assert_frame_equal(fit_std, fit_py)
    ev_std = json.loads((outs["evaluate", "std"] / "results.json").read_text())
    ev_py = json.loads((outs["evaluate", "py"] / "results.json").read_text())
    assert ev_std["performance"] == ev_py["performance"]
    assert ev_std["moment_of_learning"] == ev_py["moment_of_learning"]


def test_pybkt_names_do_not_override_configured_names(cli, write, tmp_path):
    # both `student` and `user_id` present: the default name `student` wins
    text = csv_text(
        [r + f",u{i % 2}" for i, r in enumerate(good_rows())], header=HEADER + ",user_id"
    )
    data = write("data.csv", text)
    out = tmp_path / "out"
    res = cli("kt", "fit", data, "--out", out)
    assert res.code == 0, res.err
    assert (
        json.loads((out / "config.json").read_text())["params"]["columns"]["student"] == "student"
    )
    assert set(pd.read_csv(out / "params.csv")["n_students"]) == {4}


# --------------------------------------------------------------------------------------------
# a run that fails half-way leaves nothing that looks complete
# --------------------------------------------------------------------------------------------


def test_failure_after_run_dir_created_leaves_no_results(
    cli, tmp_path, data_ab, params_ab, monkeypatch
):
    out = tmp_path / "out"
    # a complete run first, so the folder holds a results.json from before
    assert cli("kt", "predict", data_ab, "--params", params_ab, "--out", out).code == 0
    assert (out / "results.json").exists()

    import edueval.kt.commands.pipeline as pipeline

    def boom(*args, **kwargs):
        raise InputError("simulated failure half-way", file=data_ab)

    monkeypatch.setattr(pipeline, "forward_sequences", boom)
    res = cli("kt", "predict", data_ab, "--params", params_ab, "--out", out)
    assert_input_error(res, out, file=data_ab, contains=("simulated failure",))
    assert not (out / "report.html").exists()
    assert json.loads((out / "config.json").read_text())["status"] == "error"


def test_input_error_is_not_raised_through_main(write, tmp_path, capsys):
    """main() returns 2 instead of raising, so the console script never shows a traceback."""
    from edueval.cli.main import main

    data = write("data.csv", with_row(0, "s0,A,1,7,1,0.6,0.1"))
    code = main(["kt", "fit", str(data), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"error: {data}, line 2, column 'correct': expected 0 or 1, got 7\n"


@pytest.mark.parametrize(
    "params_text",
    [
        "skill,prior,learn,guess,slip\nA,0.3,0.2,0.2,0.1\n,0.4,0.1,0.25,0.15\n",
        # numeric skill names: one empty cell must not turn "1" into "1.0"
        "skill,prior,learn,guess,slip\n1,0.3,0.2,0.2,0.1\n,0.4,0.1,0.25,0.15\n",
    ],
)
def test_predict_params_empty_skill(cli, write, tmp_path, data_ab, params_text):
    params = write("params.csv", params_text)
    out = tmp_path / "out"
    res = cli("kt", "predict", data_ab, "--params", params, "--out", out)
    assert_input_error(res, out, file=params, line=3, column="skill", contains=("empty",))


def test_numeric_skill_names_match_params(cli, write, tmp_path):
    text = csv_text(good_rows()).replace(",A,", ",1,").replace(",B,", ",2,")
    data = write("data.csv", text)
    params = write("params.csv", PARAMS_AB.replace("\nA,", "\n1,").replace("\nB,", "\n2,"))
    out = tmp_path / "out"
    res = cli("kt", "predict", data, "--params", params, "--out", out)
    assert res.code == 0, res.err
    assert sorted(pd.read_csv(out / "per_skill.csv")["skill"]) == [1, 2]


def test_ids_that_look_like_numbers_stay_distinct(cli, write, tmp_path):
    rows = [f"{who},A,{t},{t % 2},0,0.5,0.5" for who in ("007", "7") for t in range(1, 4)]
    data = write("data.csv", csv_text(rows))
    params = write("params.csv", "skill,prior,learn,guess,slip\nA,0.3,0.2,0.2,0.1\n")
    out = tmp_path / "out"
    res = cli("kt", "predict", data, "--params", params, "--out", out)
    assert res.code == 0, res.err
    pred = pd.read_csv(out / "predictions.csv", dtype={"student": str})
    assert pred["student"].tolist() == ["007"] * 3 + ["7"] * 3
    assert int(pd.read_csv(out / "per_skill.csv")["n_students"].iloc[0]) == 2


def test_na_like_ids_are_ordinary_values(cli, write, tmp_path):
    """Only an empty cell is missing: a student called NA or a skill called null is a name."""
    rows = [f"{who},null,{t},{t % 2},0,0.5,0.5" for who in ("NA", "None") for t in range(1, 4)]
    data = write("data.csv", csv_text(rows))
    params = write("params.csv", "skill,prior,learn,guess,slip\nnull,0.3,0.2,0.2,0.1\n")
    out = tmp_path / "out"
    res = cli("kt", "predict", data, "--params", params, "--out", out)
    assert res.code == 0, res.err
    pred = pd.read_csv(out / "predictions.csv", keep_default_na=False)
    assert sorted(set(pred["student"])) == ["NA", "None"] and set(pred["skill"]) == {"null"}


# --------------------------------------------------------------------------------------------
# issue 24: the response file's declared schema (edueval.kt.data.RESPONSE_SCHEMA)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("row", "column"),
    [("s0,A\x00,2,1,1,0.6,0.2", "skill"), ("s0\x00,A,2,1,1,0.6,0.2", "student")],
)
def test_a_trailing_nul_is_refused_not_a_phantom_id(
    cli, write, tmp_path, params_ab, command, row, column
):
    """``skill0\\0`` used to pass as ``skill0`` (numpy's astype(str) drops a trailing NUL) and
    a phantom skill or student appeared."""
    data = write("data.csv", with_row(1, row))
    out = tmp_path / "out"
    res = cli(*kt_args(command, data, out, params_ab))
    assert_input_error(res, out, file=data, line=3, column=column,
                       contains=("control character",))  # fmt: skip


def test_a_json_object_or_null_as_id_is_refused(cli, write, tmp_path):
    rows = [{"student": f"s{k % 4}", "skill": "A", "order": k, "correct": k % 2} for k in range(20)]
    rows[3]["student"] = {"a": 1}
    data = write("data.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    res = cli("kt", "fit", data, "--out", out)
    assert_input_error(res, out, file=data, line=4, column="student", contains=("JSON object",))
    rows[3]["student"] = None
    data = write("data2.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    res = cli("kt", "fit", data, "--out", out)
    assert_input_error(res, out, file=data, line=4, column="student", contains=("empty",))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_header_column_given_twice_is_refused(cli, write, tmp_path, params_ab, command):
    text = csv_text([r + ",1" for r in good_rows()], header=HEADER + ",correct")
    data = write("data.csv", text)
    out = tmp_path / "out"
    res = cli(*kt_args(command, data, out, params_ab))
    assert_input_error(res, out, file=data, line=1, contains=("'correct' twice",))


def test_a_near_miss_of_an_absent_column_is_refused(cli, write, tmp_path):
    """An open table keeps unknown columns, but ``ordr`` beside no ``order`` is a misspelling
    (the rows would silently be ordered by file position)."""
    data = write("data.csv", csv_text(good_rows(), header=HEADER.replace("order", "ordr")))
    out = tmp_path / "out"
    res = cli("kt", "fit", data, "--out", out)
    assert_input_error(res, out, file=data, contains=("unknown column 'ordr'", "'order'"))


def test_predictions_without_known_are_read_back_by_evaluate(cli, write, tmp_path):
    """``p_known`` is a known column of the schema, never a near miss of an absent ``known``."""
    header = "student,skill,order,correct,p_correct,p_known"
    rows = [",".join(r.split(",")[:4] + r.split(",")[5:]) for r in good_rows()]
    data = write("data.csv", csv_text(rows, header=header))
    res = cli("kt", "evaluate", data, "--out", tmp_path / "out")
    assert res.code == 0, res.err
