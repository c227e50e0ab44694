"""Which input table each command reads: one mapping, from which every ``--help`` names them.

A table is named as ``edueval formats`` names it (``kt.response-file``), i.e. after its
:class:`~edueval.tables.Schema` declaration (:mod:`edueval.formats`); ``edueval formats NAME``
prints its columns.  :func:`name_tables` appends the names to the help of each argument or option
that reads one, on the built Click command tree (as :func:`.help.classic_help` sets metavars), so
the command functions keep their own help short and nothing is written twice.  Only names live
here (importing the schemas would import every protocol at start-up); tests/test_cli_inputs.py
checks each name against ``edueval formats`` and that every table it lists is read by a command.
"""

from __future__ import annotations

from typing import Any

_KT_PARAMS = ("kt.parameter-file", "kt.long-parameter-file")
_STUDY = ("study.study-question", "study.comparative-item", "study.open-item", "study.mcq-item")
_ITEM_SOURCE = ("items.response-file", "items.score-table", "items.qg-sms-question-file")

#: command ("group name") -> parameter (its Python name) -> the tables it reads
READS: dict[str, dict[str, tuple[str, ...]]] = {
    "kt simulate": {"params": _KT_PARAMS},
    "kt predict": {"data": ("kt.response-file",), "params": _KT_PARAMS},
    "kt fit": {
        "data": ("kt.response-file",),
        "fixed": ("kt.long-parameter-file",),
        "init": ("kt.long-parameter-file",),
    },
    "kt evaluate": {"data": ("kt.response-file",), "params": _KT_PARAMS},
    "kt crossvalidate": {"data": ("kt.response-file",)},
    "kt compare": {"data": ("kt.response-file",)},
    "kt roster": {"params": _KT_PARAMS, "updates": ("kt.response-file",)},
    "items analyze": {"responses": _ITEM_SOURCE, "items": ("items.items-file",)},
    "items pairs": {"responses": _ITEM_SOURCE, "items": ("items.items-file",)},
    "items dif": {
        "scores": ("items.score-table",),
        "students": ("items.students-file",),
        "key": ("items.answer-key",),
    },
    "items irt": {"scores": ("items.score-table",), "key": ("items.answer-key",)},
    "items reliability": {"scores": ("items.score-table",), "key": ("items.answer-key",)},
    "items irt-compare": {"real": ("items.score-table",), "simulated": ("items.score-table",)},
    "malalgo run": {"questions": ("malalgo.malalgoqa-question-file",)},
    "malalgo audit": {"questions": ("malalgo.malalgoqa-question-file",)},
    "malalgo score": {"responses": ("malalgo.malalgo-responses-file",)},
    "pairwise fit": {"data": ("pairwise.comparisons-table",)},
    "pairwise raters": {"data": ("pairwise.comparisons-table",)},
    "pairwise hierarchical": {"data": ("pairwise.comparisons-table",)},
    "pairwise summarize": {
        "abilities": ("pairwise.abilities-table-of-pairwise-fit",),
        "scores": ("pairwise.per-reply-score-file",),
    },
    "qgsms run": {"pairs": ("qgsms.pairs-file",), "items": ("items.items-file",)},
    "qgsms score": {"judgements": ("qgsms.judgements-file",)},
    "study serve": {"study_path": _STUDY},
    "study invite": {"study_path": _STUDY},
    "study export": {"study_path": _STUDY},
    "turing analyze": {
        "choices": ("turing.phase-2-choices",),
        "phase1": ("turing.phase-1-open-answers",),
    },
    "turing simulate": {"frequencies": ("turing.mal-rule-frequencies",)},
    "turing generate": {"phase1": ("turing.phase-1-open-answers",)},
    "turing assemble": {
        "ai": ("turing.ai-distractors-from-turing-generate",),
        "human": ("turing.human-distractors",),
        "random": ("turing.random-distractors",),
    },
    "tutor import-ncte": {"csv": ("tutor.ncte-uptake-csv",)},
    "tutor reply": {"dialogues": ("tutor.dialogue",)},
    "tutor make-study": {"replies": ("tutor.tutor-replies-table",)},
}


def table_note(tables: tuple[str, ...]) -> str:
    """The paragraph a parameter's help ends with: the tables it reads and how to see them.
    Click keeps a paragraph that starts with ``\\b`` as written, so no table name is broken
    at a hyphen."""
    if len(tables) == 1:
        lines = [f"Input table: {tables[0]}", f"(its columns: edueval formats {tables[0]})"]
    else:
        lines = ["Input tables (edueval formats NAME: columns):", *tables]
    return "\b\n" + "\n".join(lines)


def _command(root: Any, path: str) -> Any:
    command = root
    for word in path.split():
        subs = getattr(command, "commands", None) or {}
        if word not in subs:
            raise LookupError(f"edueval.cli.inputs.READS names no command {path!r}")
        command = subs[word]
    return command


def name_tables(root: Any) -> Any:
    """Append to the help of every parameter in :data:`READS` the tables it reads (a name in
    READS that the tree lacks is a programming error: ``LookupError``)."""
    for path, params in READS.items():
        command = _command(root, path)
        by_name = {p.name: p for p in command.params}
        for name, tables in params.items():
            if name not in by_name:
                raise LookupError(f"edueval.cli.inputs.READS: {path!r} has no parameter {name!r}")
            param = by_name[name]
            help_text = (getattr(param, "help", None) or "").rstrip()
            note = table_note(tables)
            if not help_text.endswith(note):  # a tree named once already (tests reuse one)
                param.help = f"{help_text}\n\n{note}".lstrip()
    return root
