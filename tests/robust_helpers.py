"""Misbehaving plugins for the "a plugin cannot take a run down" tests (tests/test_robust_units.py).

Each system misbehaves on every question whose metadata names it (``{"bad": "<how>"}``) and
otherwise answers like the toy systems of runner_helpers, so one small suite mixes good and bad units.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Iterator

from runner_helpers import ToyKB, ToyPlugin, scripted_llm, toy_plugin_manager

from provbench import hookimpl
from provbench.model import Question, Trace
from provbench.plugin_api import Intervention, Metric, System, Variant

RELEASE = threading.Event()  # a hung system waits on it (the test sets it when done)


class BadSystem(System):
    """Misbehaves as the question's ``bad`` metadata says; answers "ok" otherwise."""

    name = "bad"

    def run(self, question: Question, env) -> Trace:
        how = question.metadata.get("bad", "")
        trace = Trace(question_id=question.id, system=self.name, answer="ok")
        if how == "artifact":
            trace.artifacts["fn"] = object()
        elif how == "answer":
            trace.answer = 5  # type: ignore[assignment] - what a buggy plugin does
        elif how == "none":
            return None  # type: ignore[return-value]
        elif how == "exit":
            raise SystemExit(3)
        elif how == "interrupt":
            raise KeyboardInterrupt
        elif how == "base":
            raise GeneratorExit("a BaseException from a plugin")
        elif how == "hang":
            RELEASE.wait(60)  # "forever" for the test; released at its end
        return trace


class ViewMutator(System):
    """Empties its own view's filter into "hide everything" and tries to empty the KB on disk,
    through private attributes (as the issue's attacks did); then answers from what it sees."""

    name = "mutator"

    def run(self, question: Question, env) -> Trace:
        from provbench.kb.view import ViewFilter

        everything = frozenset(question.metadata.get("entities", []))
        env.view._hidden = ViewFilter(entities=everything)  # noqa: SLF001 - the attack
        trace = Trace(question_id=question.id, system=self.name, answer="mutated")
        try:
            env.view._store.connection().execute("MATCH (n) DETACH DELETE n")  # noqa: SLF001
            trace.artifacts["wrote_kb"] = True
        except Exception as exc:  # noqa: BLE001 - a read-only database refuses
            trace.artifacts["wrote_kb"] = f"{type(exc).__name__}: {exc}"[:300]
        return trace


# -- plugins whose code exits while a run is planned or estimated --------------------------------


class ExitingEstimate(BadSystem):
    """A system whose call estimate (asked while the run is planned) calls sys.exit."""

    name = "estimate-exits"

    @property
    def expected_llm_calls(self) -> float:
        raise SystemExit("no estimate")


class ExitingListing(Intervention):
    """Enumerated: one variant per question, but variants() calls sys.exit on a question whose
    ``bad`` metadata is "variants"."""

    name = "exits-listing"

    healed = False  # a test sets it: the listing works from then on

    def variants(self, question, baseline, rng):
        if question.metadata.get("bad") == "variants" and not ExitingListing.healed:
            raise SystemExit(4)
        return [Variant(id="as-is", description="the view as it is")]

    def make_view(self, view, question, baseline, rng, **kwargs):
        return view


class ExitingJudgeEstimate(Metric):
    name = "judge-estimate-exits"

    def expected_llm_calls(self, condition):
        raise SystemExit("no judge estimate")


class ExitingBuildEstimate(ToyKB):
    name = "build-estimate-exits"

    def expected_llm_calls(self, questions):
        raise SystemExit("no build estimate")


class BadPlugin:
    @hookimpl
    def provbench_register_systems(self):
        return {"bad": BadSystem, "mutator": ViewMutator, "estimate-exits": ExitingEstimate}

    @hookimpl
    def provbench_register_interventions(self):
        return {"exits-listing": ExitingListing}

    @hookimpl
    def provbench_register_metrics(self):
        return {"judge-estimate-exits": ExitingJudgeEstimate}

    @hookimpl
    def provbench_register_kb_builders(self):
        return {"build-estimate-exits": ExitingBuildEstimate}


def bad_plugin_manager(*extra: object):
    return toy_plugin_manager(BadPlugin(), *extra)


SUITE = """\
name: robust
dataset: {{loader: toy-json, path: questions.json}}
{kb}model: {{id: scripted}}
systems: {systems}
concurrency: {concurrency}
unit_timeout_s: {timeout}
"""


def write_suite(
    folder: Path,
    questions: list[dict],
    systems: list[str],
    *,
    kb: bool = False,
    concurrency: int = 2,
    timeout: float = 60,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.json").write_text(json.dumps(questions))
    path = folder / "suite.yaml"
    path.write_text(
        SUITE.format(
            kb="knowledge_base: {builder: toy-tiny, directory: kb}\n" if kb else "",
            systems=json.dumps(systems),
            concurrency=concurrency,
            timeout=timeout,
        )
    )
    return path


def run(suite: Path, out: Path, *extra_plugins: object, **kwargs):
    from provbench.runner import run_suite

    llm, _ = scripted_llm()
    return run_suite(suite, out=out, pm=bad_plugin_manager(*extra_plugins), llm=llm, write_report=False, **kwargs)


def question(qid: str, bad: str = "", **metadata) -> dict:
    return {
        "id": qid,
        "question": f"Who directed Glass Harbor? ({qid})",
        "answer": "Orin Vale",
        "metadata": {"bad": bad, "entities": ["ent:orin-vale", "ent:glass-harbor"], **metadata},
    }


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` on read-only media for the block: a read-only bind mount of itself as root (root
    writes through chmod), else chmod -R a-w. Skips the test when neither is possible."""
    import pytest

    if os.geteuid() != 0:
        subprocess.run(["chmod", "-R", "a-w", str(folder)], check=True)
        try:
            yield
        finally:
            subprocess.run(["chmod", "-R", "u+w", str(folder)], check=True)
        return
    mount = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True, text=True)
    if mount.returncode != 0:
        pytest.skip(f"root without a read-only mount (chmod does not stop root): {mount.stderr.strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True, capture_output=True)
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


__all__ = ["read_only", "RELEASE", "ToyPlugin", "bad_plugin_manager", "question", "run", "write_suite"]
