"""What the console shows (issue 37 item 5): a knowledge-base build in a pipe prints plain progress
lines; the leak guard's summary is printed once; `--model` help names every kind of model id."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from click.testing import CliRunner
from rich.console import Console

from provbench.cli import main
from provbench.model import LeakCheck, RunRecord, UnitKey

REPO = Path(__file__).resolve().parents[1]


def test_a_kb_build_in_a_pipe_prints_plain_progress_lines(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(REPO / p) for p in ("framework", "plugins", "tools"))}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "provbench.cli",
            "kb",
            "build",
            "quickstart",
            "--model",
            "schema-following",
            "--limit",
            "2",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert any(
        line.startswith("extracting entities") and ": started, " in line and "to do" in line for line in lines
    ), lines
    assert any(line.startswith("embedding") and ": started" in line for line in lines), lines
    assert any(line.startswith("embedding ") and "/" in line for line in lines)  # how far it got, at the end
    finished = [line.rsplit(" (", 1)[0] for line in lines if re.fullmatch(r".* (\d+)/\1 \(\d+:\d\d\)", line)]
    assert finished and len(finished) == len(set(finished)), lines  # each finished line once
    assert "\x1b[" not in done.stderr  # no terminal codes in a log


def test_the_leak_guard_summary_is_printed_once(caplog):
    from provbench.runner import _report_leaks

    records = {
        f"u{i}": RunRecord(
            key=UnitKey(question_id="q1", system="rag", condition="cited-removal", repeat=i),
            leak_check=LeakCheck(status="leaked"),
        )
        for i in range(2)
    }
    out = io.StringIO()
    with caplog.at_level(logging.WARNING):
        _report_leaks(SimpleNamespace(questions={"q1": None}), records, Console(file=out, width=200))
    assert out.getvalue().count("leak guard: 2 intervention unit(s) checked") == 1
    assert "leaked: rag x cited-removal: 2 unit(s)" in out.getvalue()
    assert not [r for r in caplog.records if "leak guard" in r.getMessage()]  # not a second time through logging
    with caplog.at_level(logging.WARNING):  # without a console (a run from Python), the log says it
        _report_leaks(SimpleNamespace(questions={"q1": None}), records, None)
    assert [r for r in caplog.records if "leak guard" in r.getMessage()]


def test_model_help_names_every_kind_of_model_id():
    for command in ("run", "plan"):
        text = " ".join(CliRunner().invoke(main, [command, "--help"], terminal_width=400).output.split())
        for kind in (
            "schema-following",
            "control:<behaviour>",
            "llama-cpp:<name or file.gguf>",
            "embedded",
            "OPENAI_API_BASE=http://127.0.0.1:8000/v1",
            "litellm id",
        ):
            assert kind in text, (command, kind)
