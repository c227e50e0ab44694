"""``malalgo audit``: a words-only classifier must not pick the key on generated items, and must
pick it on a file whose keys carry a cue (so the test can fail)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from edueval.cli.main import main
from edueval.malalgo import read_questions
from edueval.malalgo.audit import audit_key_cues
from edueval.misconceptions import generate_items

LETTERS = "ABCD"
#: words that mark a rationale as a mistake (the issue counted "instead" and "ignored")
ERROR_WORDS = re.compile(
    r"\b(instead|ignor\w*|forg[eo]t\w*|wrong\w*|mistak\w*|incorrect\w*|correctly|without|"
    r"never|only|as if|rather than|did not|didn't|treated|confus\w*)\b",
    re.I,
)


@pytest.fixture(scope="module")
def items():
    return generate_items(400, seed=11)


@pytest.fixture(scope="module")
def items_file(tmp_path_factory, items):
    path = tmp_path_factory.mktemp("audit") / "questions.csv"
    items.to_csv(path, index=False)
    return path


def _cued(items: pd.DataFrame) -> pd.DataFrame:
    out = items.copy()
    for i, key in enumerate(out["answer"]):
        col = f"rationale_{key}"
        out.loc[out.index[i], col] = "Clearly " + out.loc[out.index[i], col]
    return out


def test_generated_items_give_no_cue(items):
    res = audit_key_cues(read_questions_frame(items), folds=5, seed=3)
    assert res.n_questions == 400
    # within chance: the accuracy's Wilson interval holds 1/4 and the accuracy is no higher
    # than the 97.5th percentile of Binomial(400, 1/4) / 400
    assert res.ci_low <= 0.25 <= res.ci_high, res.as_dict()
    assert res.accuracy <= res.chance_high and not res.cue_detected


def test_a_cue_on_the_keys_is_detected(items):
    res = audit_key_cues(read_questions_frame(_cued(items)), folds=5, seed=3)
    assert res.accuracy > 0.9 and res.cue_detected and res.p_value < 1e-6
    assert res.weights.iloc[0]["feature"] == "clearly"


def test_the_issue_cues_are_gone(items):
    """Every rationale of an item opens with the same word (no past-tense malgorithms beside an
    imperative key), and no rationale holds an error word."""
    for _, row in items.iterrows():
        firsts = {row[f"rationale_{x}"].split()[0] for x in LETTERS}
        assert len(firsts) == 1, [row[f"rationale_{x}"] for x in LETTERS]
        assert not next(iter(firsts)).lower().endswith("ed")
        for x in LETTERS:
            assert not ERROR_WORDS.search(row[f"rationale_{x}"]), row[f"rationale_{x}"]


def read_questions_frame(df: pd.DataFrame) -> pd.DataFrame:
    from edueval.malalgo.data import normalise_questions

    return normalise_questions(df)


def test_cli_writes_a_run_directory_from_release_column_names(tmp_path, items):
    ren = {
        "id": "ID",
        "question": "Question",
        "answer": "Answer",
        **{f"choice_{x}": f"Choice_{x}" for x in LETTERS},
        **{f"rationale_{x}": f"Rationale_{x}" for x in LETTERS},
    }
    path = tmp_path / "release.csv"
    _cued(items.head(120)).rename(columns=ren).to_csv(path, index=False)
    assert read_questions(path).shape[0] == 120
    code = main(["malalgo", "audit", str(path), "--folds", "4", "--seed", "2",
                 "--out", str(tmp_path / "a")])  # fmt: skip
    assert code == 0
    res = json.loads((tmp_path / "a" / "results.json").read_text())
    assert res["n_questions"] == 120 and res["cue_detected"] and res["accuracy"] > 0.8
    picks = pd.read_csv(tmp_path / "a" / "picks.csv")
    assert len(picks) == 120 and set(picks["fold"]) == {0, 1, 2, 3}
    assert (tmp_path / "a" / "report.html").exists()
    assert (tmp_path / "a" / "weights.csv").exists()
    cues = pd.read_csv(tmp_path / "a" / "cues.csv")
    models = pd.read_csv(tmp_path / "a" / "models.csv").set_index("cue")
    assert len(cues) == 29 and {"share", "ci_low", "ci_high", "p_holm", "flagged"} <= set(cues)
    assert models.loc["words-only model", "flagged"] and "words-only model" in res["flagged"]
    assert {"tree ensemble: choices", "tree ensemble: all"} <= set(models.index)
    learned = pd.read_csv(tmp_path / "a" / "learned_by_family.csv")
    assert {"reader", "family", "n", "share", "ci_low", "ci_high"} <= set(learned)
    ranks = pd.read_csv(tmp_path / "a" / "value_rank_by_family.csv")
    assert {"rank 1", "rank 4", "p_value", "p_holm", "uniform"} <= set(ranks)
    assert "value_rank_uniform_in_every_family" in res


@pytest.mark.parametrize("folds", ["1", "500"])
def test_bad_folds_is_one_line_exit_2(tmp_path, items_file, capsys, folds):
    code = main(["malalgo", "audit", str(items_file), "--folds", folds,
                 "--out", str(tmp_path / "a")])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err.strip()
    # --folds 1 is out of the option's range (Click's usage error: one "Error:" line naming it);
    # --folds 500 exceeds the questions (the command's own one-line error)
    errors = [line for line in err.splitlines() if line.lower().startswith("error")]
    assert len(errors) == 1 and "folds" in errors[0]
    assert "Traceback" not in err
