"""A run's spans and scores in a real Arize Phoenix: ``provbench traces RUN --phoenix URL`` puts the
run in a project of its own, and every score on its unit's root span as an annotation (Phoenix's
evaluations), read back through Phoenix's REST API.

The server is started here: from this environment when ``arize-phoenix`` is installed in it, or
the ``phoenix`` executable that ``PROVBENCH_PHOENIX`` names (Phoenix in an environment of its own:
it pins much that provbench pins otherwise). Without either the tests skip, saying so. Phoenix takes
about a minute to start on 2 busy cores, hence the integration mark."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
import httpx  # noqa: E402

from provbench.cli import main  # noqa: E402
from provbench.phoenix import score_annotations  # noqa: E402
from provbench.report.data import load_run  # noqa: E402
from provbench.tracing import UnitIds, project_name  # noqa: E402

pytestmark = pytest.mark.integration


def phoenix_command() -> list[str] | None:
    named = os.environ.get("PROVBENCH_PHOENIX")
    if named:
        return [named, "serve"]
    if importlib.util.find_spec("phoenix") is not None and importlib.util.find_spec("phoenix.server") is not None:
        return [sys.executable, "-m", "phoenix.server.main", "serve"]
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    command = phoenix_command()
    if command is None:
        pytest.skip(
            "no Phoenix server here: arize-phoenix is not installed in this environment and "
            "PROVBENCH_PHOENIX names no phoenix executable"
        )
    home = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(home),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (home / "server.log").open("wb")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert server.poll() is None, (home / "server.log").read_text()[-3000:]
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        else:
            pytest.fail("Phoenix did not start in 240 s: " + (home / "server.log").read_text()[-3000:])
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    from runner_helpers import builtin_plugin_manager, builtin_reply, write_builtin_suite

    from provbench.llm import LLMClient, ScriptedBackend
    from provbench.runner import run_suite

    folder = tmp_path_factory.mktemp("phoenix-run")
    llm = LLMClient(ScriptedBackend(replies=[builtin_reply] * 500))
    suite = write_builtin_suite(folder / "suite")
    plain = "metrics: [accuracy, output-changed, footprint, provenance]\n"
    # and one score a judge LLM gives: the control judge (ragas' prompts answered by rule)
    judged = plain.replace("]", ", ragas-context-entity-recall]") + "judge: {id: 'control:judge'}\n"
    suite.write_text(suite.read_text().replace(plain, judged))
    return run_suite(
        suite,
        out=folder / "run",
        pm=builtin_plugin_manager(),
        llm=llm,
        write_report=False,
    )


def paged(url: str, params: dict) -> list[dict]:
    """Every item of a Phoenix REST listing, following its cursor."""
    items, cursor = [], None
    while True:
        response = httpx.get(
            url, params={**params, "limit": 1000, **({"cursor": cursor} if cursor else {})}, timeout=30
        )
        assert response.status_code == 200, response.text
        body = response.json()
        items += body["data"]
        cursor = body.get("next_cursor")
        if not cursor:
            return items


def test_scores_arrive_as_annotations_in_the_runs_own_project(phoenix, run_dir):
    run = load_run(run_dir)
    result = CliRunner().invoke(main, ["traces", str(run_dir), "--phoenix", phoenix], catch_exceptions=False)
    expected = score_annotations(run)
    assert result.exit_code == 0, result.output
    assert f"{len(expected)} score(s) annotated" in result.output and project_name(run) in result.output

    ids = UnitIds(run.manifest.run_id)
    roots = {format(ids.root_span_id(r.key.as_str()), "016x"): r for r in run.records}
    project = project_name(run)
    spans = paged(f"{phoenix}/v1/projects/{project}/spans", {})
    assert {s["context"]["span_id"] for s in spans} >= set(roots)  # the root spans are where the scores go

    found = [
        a
        for span_ids in (list(roots)[i : i + 50] for i in range(0, len(roots), 50))
        for a in paged(f"{phoenix}/v1/projects/{project}/span_annotations", {"span_ids": span_ids})
    ]
    got = {(a["span_id"], a["name"]): a["result"]["score"] for a in found}
    wanted = {
        (span_id, name): value
        for span_id, record in roots.items()
        for name, value in record.scores.items()
        if value is not None
    }
    assert wanted and got == pytest.approx(wanted)
    assert all(a["metadata"]["run_id"] == run.manifest.run_id for a in found)
    kinds = {a["name"]: a["annotator_kind"] for a in found}
    assert kinds.pop("context_entity_recall") == "LLM"  # a judge LLM's score, declared by its metric
    assert set(kinds.values()) == {"CODE"} and "accuracy" in kinds

    again = CliRunner().invoke(main, ["traces", str(run_dir), "--phoenix", phoenix], catch_exceptions=False)
    assert again.exit_code == 0  # the same ids: annotations replaced, not added
    recount = paged(f"{phoenix}/v1/projects/{project}/span_annotations", {"span_ids": list(roots)[:50]})
    assert len(recount) == len([k for k in wanted if k[0] in list(roots)[:50]])


def test_annotations_on_spans_phoenix_never_got_fail_with_the_reason(phoenix, run_dir, monkeypatch):
    import provbench.phoenix as module

    run = load_run(run_dir)
    monkeypatch.setattr(
        module,
        "score_annotations",
        lambda run: [
            {"span_id": "00000000000000ff", "name": "accuracy", "annotator_kind": "CODE", "result": {"score": 1.0}}
        ],
    )
    started = time.monotonic()
    with pytest.raises(module.UserError, match="answered 404"):
        module.annotate_scores(run, phoenix, wait_s=2.0)
    assert time.monotonic() - started < 15
