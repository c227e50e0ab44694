"""``malalgo score`` refuses every key value it would otherwise miscount (issue 11, 4)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from edueval.malalgo.pipeline import run_malalgo
from edueval.models import get_model
from support.scripted_server import ScriptedServer

from .conftest import assert_refused


@pytest.fixture(scope="module")
def responses(tmp_path_factory) -> pd.DataFrame:
    """A real responses.csv: three generated questions answered by a scripted server."""
    from edueval.malalgo.pipeline import generate_run

    path = tmp_path_factory.mktemp("p3")
    generate_run(path / "q", n=3, seed=5)
    with ScriptedServer(lambda body: json.dumps({"Correct Choice": "B"})) as server:

        def opener(log_path):
            return get_model("openai/scripted", base_url=server.url, cache_dir=path / "c",
                             log_path=log_path)  # fmt: skip

        run_malalgo(path / "run", path / "q" / "questions.csv", open_model=opener,
                    model_name="scripted")  # fmt: skip
    return pd.read_csv(path / "run" / "responses.csv", dtype=str, keep_default_na=False)


def _first(df: pd.DataFrame, kind: str) -> int:
    return int(df.index[df["kind"] == kind][0])


def _set(column: str, value: str, kind: str = "identify"):
    def change(df: pd.DataFrame) -> pd.DataFrame:
        df.loc[_first(df, kind), column] = value
        return df

    return change


def _duplicate(df: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([df, df.iloc[[3]]], ignore_index=True)


def _two_keys(df: pd.DataFrame) -> pd.DataFrame:
    ident = df.index[(df["kind"] == "identify") & (df["is_correct_choice"] == "False")]
    df.loc[ident[0], "is_correct_choice"] = "True"
    return df


BAD = {
    "kind Identify": (_set("kind", "Identify"), "kind"),
    "kind empty": (_set("kind", ""), "kind"),
    "status JSON": (_set("status", "JSON"), "status"),
    "status ok": (_set("status", "ok"), "status"),
    "is_correct_choice yes": (_set("is_correct_choice", "yes"), "is_correct_choice"),
    "is_correct_choice 2": (_set("is_correct_choice", "2"), "is_correct_choice"),
    "is_correct_choice abc": (_set("is_correct_choice", "abc"), "is_correct_choice"),
    "is_correct_choice empty": (_set("is_correct_choice", ""), "is_correct_choice"),
    "target E": (_set("target", "E"), "target"),
    "target lower-case": (_set("target", "b"), "target"),
    "answer_label X": (_set("answer_label", "X"), "answer_label"),
    "answer_label empty on a json row": (_set("answer_label", ""), "answer_label"),
    "mcq answer_label 7": (_set("answer_label", "7", "mcq"), "answer_label"),
    "duplicated row": (_duplicate, "duplicate"),
    "two correct choices": (_two_keys, "exactly 1"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_key_value_is_refused(edueval, tmp_path, responses, case) -> None:
    change, says = BAD[case]
    bad = change(responses.copy())
    path = tmp_path / "responses.csv"
    bad.to_csv(path, index=False)
    out = tmp_path / "scored"
    run = edueval("malalgo", "score", path, "--out", out)
    assert_refused(run, code=2, out=out, contains=says)
    assert "responses.csv" in run.err


def test_the_file_as_written_scores(edueval, tmp_path, responses) -> None:
    path = tmp_path / "responses.csv"
    responses.to_csv(path, index=False)
    run = edueval("malalgo", "score", path, "--out", tmp_path / "scored")
    assert run.code == 0, run
    results = json.loads((tmp_path / "scored" / "results.json").read_text())
    assert results["n_prompts"] == len(responses) == 15


@pytest.mark.parametrize("dropped", [["grade"], ["grade", "content", "dok"]])
def test_responses_without_the_optional_question_columns_score(
    edueval, tmp_path, responses, dropped
) -> None:
    # issue 39: `malalgo score` without a grade column ended in KeyError: 'grade'
    path = tmp_path / "responses.csv"
    responses.drop(columns=dropped).to_csv(path, index=False)
    run = edueval("malalgo", "score", path, "--out", tmp_path / "scored")
    assert run.code == 0, run
    results = json.loads((tmp_path / "scored" / "results.json").read_text())
    assert results["n_prompts"] == 15
    assert not (tmp_path / "scored" / "by_grade.csv").exists()  # no grades: no breakdown by them
