"""The full demo's P5 step (``edueval demo`` without ``--quick``): the simulation study, then one
``turing generate`` on a Phase-1 file the demo writes from the simulation's bank.  The full demo
once stopped there with exit 2 (its Phase-1 file lay inside the generate run's own folder, and a
run folder never holds its input).  Run here through the command line in process, at tiny sizes:
the other protocols' steps are stubbed, the simulation made small and the embedded model replaced
by the scripted server; the turing code path is the demo's own."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from edueval import demo
from edueval.models import get_model
from support.scripted_server import ScriptedServer, last_user_message


def _script(body: dict) -> str:
    """Generator, second solve and AI of turing generate: q' = "What is a + b?" with its key,
    the key again, and the key plus one as the AI's distractor."""
    text = last_user_message(body)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    if "Write one new question" in text:
        a, b = 10 + digest[0] % 50, 10 + digest[1] % 50
        return json.dumps({"related_question": f"What is {a} + {b}?", "correct_answer": str(a + b)})
    numbers = [int(x) for x in re.findall(r"What is (\d+) \+ (\d+)\?", text)[-1]]
    if text.startswith("Solve this question:"):
        return json.dumps({"answer": str(sum(numbers))})
    return json.dumps({"distractor": str(sum(numbers) + 1)})


def _close(fig) -> None:
    import matplotlib.pyplot as plt

    plt.close(fig)


def _stub(name: str):
    def step(out, quick, seed, log):
        return {"name": name, "href": f"{name}/report.html", "summary": "stubbed in this test"}

    return step


@pytest.fixture
def small_demo(monkeypatch, tmp_path):
    """The demo with only its P5 step, small, and the scripted server as its model."""
    import edueval.report as report
    import edueval.turing.simulate as simulate

    for step in ("_demo_kt", "_demo_pairwise", "_demo_malalgo", "_demo_items_qgsms", "_demo_tutor"):
        monkeypatch.setattr(demo, step, _stub(step))
    small = simulate.SimConfig

    def config(*args, **kwargs):  # the demo's SimConfig(reps=..., seed=...) made small
        if set(kwargs) == {"reps", "seed"} and not args:
            kwargs.update(n_students=10, n_questions=4, reps=3)
        return small(*args, **kwargs)

    monkeypatch.setattr(simulate, "SimConfig", config)
    # the simulation report's figures are not this step (rendering them takes most of the time)
    monkeypatch.setattr(report, "png_bytes", lambda fig: _close(fig) or b"PNG")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with ScriptedServer(_script) as server:

        def scripted(log_path):
            return get_model("openai/scripted", base_url=server.url, log_path=log_path,
                             cache_dir=tmp_path / "cache")  # fmt: skip

        monkeypatch.setattr(demo, "_local_model", scripted)
        yield server


def test_the_full_demos_turing_generate_step_exits_0_with_its_input_outside_the_run(
    cli, tmp_path, small_demo
) -> None:
    out = tmp_path / "demo"
    res = cli("demo", "--out", out)  # not --quick: the full demo runs turing generate
    assert res.code == 0, res.err
    run = out / "turing-generate"
    phase1 = out / "turing-generate-input" / "phase1.csv"
    assert phase1.is_file() and (run / "distractors.csv").is_file()
    assert small_demo.calls >= 2  # the generator and the AI (a bare sum: its key evaluated)
    assert run.resolve() not in phase1.resolve().parents  # the input lies outside the run
    config = json.loads((run / "config.json").read_text())
    assert config["status"] == "complete"
    recorded = json.dumps(config.get("inputs", config))
    assert "turing-generate-input" in recorded
    assert "one-tuple turing generate" in (out / "index.html").read_text()
