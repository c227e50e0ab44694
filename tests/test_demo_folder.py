"""A second ``edueval demo`` into the same folder replaces the first one's files (it refused the
tutor dialogues the first demo wrote at the top of the folder as files edueval did not write)."""

from __future__ import annotations

import pytest

from edueval.cli.common import out_dir
from edueval.demo import DEMO_FILES
from edueval.io import InputError


def test_a_demo_folder_is_the_demos_own(tmp_path):
    for name in DEMO_FILES:
        (tmp_path / name).write_text("x")
    assert out_dir(tmp_path, "demo", inputs=(), own=DEMO_FILES) == tmp_path
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="did not write"):
        out_dir(tmp_path, "demo", inputs=(), own=DEMO_FILES)


def test_every_top_level_file_the_demo_writes_is_listed():
    import re
    from pathlib import Path

    import edueval.demo as demo

    text = Path(demo.__file__).read_text(encoding="utf-8")
    top = set(re.findall(r'out / "([\w.-]+\.\w+)"', text))
    assert top and top <= set(DEMO_FILES), top - set(DEMO_FILES)
