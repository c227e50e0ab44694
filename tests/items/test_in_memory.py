"""Issue 19 (1): item analysis in memory -- ``analyze_items(responses_df, items_df)`` on the user's
own DataFrames gives the numbers ``items analyze`` writes for the same data, validates the frames
as the files are validated (one-line :class:`InputError` naming the column) and writes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from edueval.cli.main import main
from edueval.io import InputError
from edueval.items import (
    ClassroomConfig,
    ItemAnalysis,
    ItemData,
    analyze_items,
    read_items,
    read_qgsms_questions,
    read_responses,
    simulate_classroom,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ITEM_COLUMNS = ["item", "text", "choices", "answer", "material", "topic", "material_text"]


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture(scope="module")
def classroom(tmp_path_factory) -> dict:
    """A simulated classroom as the user's DataFrames, as files, and ``items analyze`` on them."""
    base = tmp_path_factory.mktemp("items_in_memory")
    room = simulate_classroom(ClassroomConfig(n_students=30, seed=3))
    responses = room.responses[["student", "item", "choice", "correct"]].copy()
    items = room.items[ITEM_COLUMNS].copy()
    responses.to_csv(base / "responses.csv", index=False)
    (base / "items.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in items.to_dict("records")), encoding="utf-8"
    )
    run = base / "run"
    assert (
        main(
            [
                "items",
                "analyze",
                str(base / "responses.csv"),
                str(base / "items.jsonl"),
                "--out",
                str(run),
            ]
        )
        == 0
    )
    return {"responses": responses, "items": items, "run": run}


@pytest.fixture
def empty_cwd(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check_equal(res: ItemAnalysis, run: Path) -> None:
    saved = json.loads((run / "results.json").read_text(encoding="utf-8"))
    assert res.n_items == saved["n_items"]
    assert res.n_students == saved["n_students"]
    assert res.n_responses == saved["n_responses"]
    assert res.has_choices == saved["has_choices"]
    assert res.n_nonfunctional == saved["n_nonfunctional"]
    for name, value in res.mean.items():
        assert value == pytest.approx(saved["mean"][name], rel=1e-12, abs=1e-15), name
    stats = pd.read_csv(run / "item_stats.csv", dtype={"item": str, "material": str})
    for col in ("n", "n_correct", "DF", "DC", "DC_rest", "DC_ul", "DE"):
        np.testing.assert_allclose(
            res.items[col].to_numpy(float), stats[col].to_numpy(float), rtol=1e-12, err_msg=col
        )
    assert list(res.items["item"]) == list(stats["item"])
    distractors = pd.read_csv(run / "distractors.csv", dtype={"item": str})
    assert list(res.distractors["n_chosen"]) == list(distractors["n_chosen"])


def test_frames_equal_the_cli_run(classroom, empty_cwd):
    res = analyze_items(classroom["responses"], classroom["items"])
    assert isinstance(res, ItemAnalysis)
    _check_equal(res, classroom["run"])
    assert _tree(empty_cwd) == []  # nothing written


def test_itemdata_of_user_frames_is_validated(classroom, empty_cwd):
    """The issue's failing call: ``ItemData(items, responses)`` of raw frames (was KeyError)."""
    res = analyze_items(ItemData(classroom["items"], classroom["responses"]))
    _check_equal(res, classroom["run"])
    assert _tree(empty_cwd) == []


def test_frames_are_not_modified(classroom):
    responses, items = classroom["responses"].copy(), classroom["items"].copy()
    analyze_items(responses, items)
    pd.testing.assert_frame_equal(responses, classroom["responses"])
    pd.testing.assert_frame_equal(items, classroom["items"])


def test_summary_and_tidy_rows(classroom, capsys):
    res = analyze_items(classroom["responses"], classroom["items"])
    assert capsys.readouterr().out == ""  # nothing printed
    text = res.summary()
    assert f"{res.n_items} items" in text and "DF mean" in text
    tidy = res.to_frame()
    assert list(tidy.columns) == ["item", "material", "topic", "measure", "value"]
    assert len(tidy) == 9 * res.n_items  # alpha_if_deleted too
    df = tidy[tidy["measure"] == "DF"].set_index("item")["value"]
    np.testing.assert_allclose(df.to_numpy(float), res.items.set_index("item")["DF"].to_numpy())


def test_correct_only_frames(classroom):
    """Without ``choice``: DE unknown, the other numbers as with it."""
    full = analyze_items(classroom["responses"], classroom["items"])
    res = analyze_items(classroom["responses"].drop(columns="choice"), classroom["items"])
    assert not res.has_choices and res.items["DE"].isna().all()
    np.testing.assert_allclose(res.items["DC"], full.items["DC"])


def test_readers_take_paths_or_frames(classroom, tmp_path):
    items_path = tmp_path / "items.jsonl"
    items_path.write_text(
        "".join(json.dumps(r) + "\n" for r in classroom["items"].to_dict("records")),
        encoding="utf-8",
    )
    from_file, from_frame = read_items(items_path), read_items(classroom["items"])
    pd.testing.assert_frame_equal(from_file, from_frame)
    responses = read_responses(classroom["responses"], from_frame)
    assert list(responses.columns) == ["student", "item", "choice", "correct"]
    assert len(responses) == len(classroom["responses"])


def test_qgsms_questions_as_a_frame(tmp_path):
    records = json.loads((FIXTURES / "qgsms_questions.json").read_text(encoding="utf-8"))
    run = tmp_path / "run"
    assert (
        main(["items", "analyze", str(FIXTURES / "qgsms_questions.json"), "--out", str(run)]) == 0
    )
    res = analyze_items(pd.DataFrame(records))
    _check_equal(res, run)
    direct = read_qgsms_questions(pd.DataFrame(records))
    pd.testing.assert_frame_equal(
        direct.responses, read_qgsms_questions(FIXTURES / "qgsms_questions.json").responses
    )


def _responses_without_correct_or_choice(r: pd.DataFrame) -> pd.DataFrame:
    return r.drop(columns=["choice", "correct"])


def _near_miss(r: pd.DataFrame) -> pd.DataFrame:
    return r.drop(columns="correct").rename(columns={"choice": "choise"})


def _bad_choice(r: pd.DataFrame) -> pd.DataFrame:
    r = r.copy()
    r.loc[4, "choice"] = "Z"
    return r


def _bad_correct(r: pd.DataFrame) -> pd.DataFrame:
    r = r.drop(columns="choice")
    r.loc[2, "correct"] = 2
    return r


def _disagreeing_correct(r: pd.DataFrame) -> pd.DataFrame:
    r = r.copy()
    r.loc[0, "correct"] = 1 - r.loc[0, "correct"]
    return r


def _unknown_item(r: pd.DataFrame) -> pd.DataFrame:
    r = r.copy()
    r.loc[1, "item"] = "no-such-item"
    return r


def _spaced_student(r: pd.DataFrame) -> pd.DataFrame:
    r = r.copy()
    r.loc[1, "student"] = " s1"
    return r


def _duplicate_answer(r: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([r, r.iloc[[0]]], ignore_index=True)


@pytest.mark.parametrize(
    ("spoil", "column"),
    [
        (_responses_without_correct_or_choice, None),
        (_near_miss, None),
        (_bad_choice, "choice"),
        (_bad_correct, "correct"),
        (_disagreeing_correct, "correct"),
        (_unknown_item, "item"),
        (_spaced_student, "student"),
        (_duplicate_answer, None),
    ],
)
def test_bad_response_frames(classroom, empty_cwd, spoil, column):
    with pytest.raises(InputError) as info:
        analyze_items(spoil(classroom["responses"]), classroom["items"])
    message = str(info.value)
    assert "\n" not in message and message.startswith("responses DataFrame")
    if column is not None:
        assert info.value.column == column and f"column '{column}'" in message
    assert _tree(empty_cwd) == []


def test_messages_name_the_column(classroom):
    with pytest.raises(InputError, match="correct") as info:
        analyze_items(_near_miss(classroom["responses"]), classroom["items"])
    assert "did you mean 'choice'" in str(info.value)
    items = classroom["items"].drop(columns="answer")
    with pytest.raises(InputError, match="'answer'"):
        analyze_items(classroom["responses"], items)


@pytest.mark.parametrize(
    ("change", "column"),
    [
        ({"answer": "Z"}, "answer"),
        ({"choices": ["only one"]}, "choices"),
        ({"choices": "not json"}, "choices"),
        ({"item": ""}, "item"),
        ({"topic": None}, "topic"),
    ],
)
def test_bad_item_frames(classroom, change, column):
    items = classroom["items"].copy()
    for key, value in change.items():
        items[key] = items[key].astype(object)
        items.at[0, key] = value
    with pytest.raises(InputError) as info:
        analyze_items(classroom["responses"], items)
    assert str(info.value).startswith("items DataFrame") and info.value.column == column


def test_empty_and_question_without_answers(classroom):
    with pytest.raises(InputError, match="no data rows"):
        analyze_items(classroom["responses"].iloc[:0], classroom["items"])
    first = classroom["items"]["item"].iloc[0]
    fewer = classroom["responses"][classroom["responses"]["item"] != first]
    with pytest.raises(InputError, match=f"question '{first}' has no responses"):
        analyze_items(fewer, classroom["items"])


def test_itemdata_and_items_together_refused(classroom):
    with pytest.raises(TypeError):
        analyze_items(ItemData(classroom["items"], classroom["responses"]), classroom["items"])


def test_no_report_modules_loaded():
    code = (
        "import sys, edueval.items, edueval.kt; "
        "print([m for m in ('jinja2', 'matplotlib') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
