"""The Ray executor: a suite on a local Ray cluster gives the same records as on threads, and the
LLM replies its workers fetched reach the driver's cache (a later run makes no call). A knowledge
base built for the Ray executor (a suite's, or `kb build --executor ray`) embeds with Ray Data.
One local cluster (2 CPUs) serves the whole module."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ray = pytest.importorskip("ray")

from runner_helpers import builtin_plugin_manager, write_builtin_suite  # noqa: E402

from provbench.kb.graphstore import COMPLETE_MARKER  # noqa: E402
from provbench.runner import run_suite  # noqa: E402
from provbench.run_store import RunStore  # noqa: E402
from provbench.testing import schema_following_llm  # noqa: E402

TIMING = ("latency_s", "cached", "original_latency_s")


def rounded(value):
    """Similarity scores differ in the 7th digit between processes (BLAS threads): compare to 5."""
    if isinstance(value, float):
        return round(value, 5)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def projected(run_dir: Path) -> dict[str, dict]:
    out = {}
    for key, record in RunStore(run_dir).load_records().items():
        data = record.model_dump(mode="json", exclude={"started_at", "finished_at"})
        trace = data.get("trace") or {}
        trace.pop("wall_time_s", None)
        for call in trace.get("llm_calls", []):
            for name in TIMING:
                call.pop(name, None)
        out[key] = rounded(data)
    return out


def run(folder: Path, out: Path, executor: str):
    suite = write_builtin_suite(folder)
    suite.write_text(suite.read_text() + f"executor: {executor}\nconcurrency: 4\n")
    llm = schema_following_llm(cache_dir=out / "cache", max_concurrency=4)
    return run_suite(suite, out=out, pm=builtin_plugin_manager(), llm=llm, write_report=False), llm


@pytest.fixture(scope="module")
def local_ray():
    # workers import the test helpers (toy plugins) as the driver does
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}},
    )
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_executor_gives_the_records_of_threads_and_brings_the_cache_home(tmp_path, local_ray):
    threads_dir, _ = run(tmp_path / "threads", tmp_path / "run-threads", "threads")
    ray_dir, ray_llm = run(tmp_path / "ray", tmp_path / "run-ray", "ray")
    # the suite chose Ray: its knowledge base was embedded by a Ray Data job (same vectors: same records)
    assert json.loads((tmp_path / "ray" / "kb" / COMPLETE_MARKER).read_text())["embedder"] == "ray-data"
    assert json.loads((tmp_path / "threads" / "kb" / COMPLETE_MARKER).read_text())["embedder"] == "in-process"
    expected, actual = projected(threads_dir), projected(ray_dir)
    assert sorted(actual) == sorted(expected) and len(actual) > 6
    assert actual == expected
    assert len(ray_llm.backend.calls) == 0  # the driver's client asked nothing: the workers did
    # every reply a worker fetched is in the run's cache: forget the records, re-run on threads
    (ray_dir / "records.jsonl").unlink()
    again_dir, again_llm = run(tmp_path / "ray", tmp_path / "run-ray", "threads")
    assert len(again_llm.backend.calls) == 0
    assert projected(again_dir) == expected
    # and on Ray: the workers read the run's cache, so resuming there asks nothing either
    (ray_dir / "records.jsonl").unlink()
    resumed_dir, _ = run(tmp_path / "ray", tmp_path / "run-ray", "ray")
    calls = [
        call
        for record in RunStore(resumed_dir).load_records().values()
        if record.trace
        for call in record.trace.llm_calls
    ]
    assert calls and all(call.cached for call in calls)
    assert projected(resumed_dir) == expected


def test_ray_data_embedding_matches_the_in_process_embedder(local_ray):
    """The batch path on a small input split in many batches: each group gets the in-process
    vectors in its own order, and progress counts every text of every group."""
    import numpy as np

    from provbench.kb.embeddings import embed_texts
    from provbench.kb.ray_embed import RayDataEmbedder

    texts = [f"Passage {i} about river number {i % 7} and town {i % 3}." for i in range(23)]
    groups = [texts[:17], [], texts[17:]]
    done = [0, 0, 0]
    vectors = RayDataEmbedder(concurrency=1, batch_size=5).embed_groups(
        groups, lambda group, n: done.__setitem__(group, done[group] + n)
    )
    assert [v.shape for v in vectors] == [(17, 384), (0, 384), (6, 384)] and vectors[0].dtype == np.float32
    assert done == [17, 0, 6]
    assert np.allclose(np.concatenate(vectors), embed_texts(texts), atol=1e-5)


def tiny_2wiki(folder: Path) -> list[str]:
    from kb_2wiki_helpers import write_tiny_2wiki

    data = write_tiny_2wiki(folder / "dev.json")
    return [
        str(data),
        "--builder",
        "2wiki-paper000",
        "--model",
        "scripted",
        "--option",
        "extract=false",
        "--option",
        "summarize=false",
    ]


def own_documents(folder: Path) -> list[str]:
    """A user's folder of documents (.md, .html, .pdf, .txt), extraction and summaries by the test model."""
    from provbench_tools.own_docs import write as write_own_docs

    write_own_docs(folder / "data")
    return [str(folder / "data" / "docs"), "--builder", "documents", "--model", "schema-following"]


@pytest.mark.parametrize("source", [tiny_2wiki, own_documents], ids=["2wiki-paper000", "documents"])
def test_kb_build_with_the_ray_executor_embeds_with_ray_data(tmp_path, local_ray, monkeypatch, source):
    """`kb build --executor ray` embeds every index of a builder that knows nothing of Ray in a Ray
    Data job, giving the in-process build's vectors: a built-in dataset's builder and the own-data
    ``documents`` builder alike. The driver's own model is switched off for the Ray build, so a
    silent in-process fallback would fail it."""
    import numpy as np
    from click.testing import CliRunner

    from provbench.cli import main
    from provbench.kb import embeddings
    from provbench.kb.embeddings import VectorIndex
    from provbench.kb.graphstore import ALL_INDICES, VECTORS_DIR

    args = ["kb", "build", *source(tmp_path)]
    here = CliRunner().invoke(main, args + ["--out", str(tmp_path / "here")])
    assert here.exit_code == 0, here.output

    def no_model():
        raise AssertionError("the driver loaded the embedding model: the build did not embed with Ray")

    monkeypatch.setattr(embeddings, "embedding_model", no_model)
    remote = CliRunner().invoke(main, args + ["--out", str(tmp_path / "ray"), "--executor", "ray"])
    assert remote.exit_code == 0, remote.output
    markers = {name: json.loads((tmp_path / name / COMPLETE_MARKER).read_text()) for name in ("here", "ray")}
    assert markers["here"]["embedder"] == "in-process" and markers["ray"]["embedder"] == "ray-data"
    for index in ALL_INDICES:
        expected = VectorIndex.load(tmp_path / "here" / VECTORS_DIR, index)
        actual = VectorIndex.load(tmp_path / "ray" / VECTORS_DIR, index)
        assert actual.ids == expected.ids and len(actual.ids) > 0, index
        assert np.allclose(actual.vectors, expected.vectors, atol=1e-5), index
    mixed = CliRunner().invoke(
        main, args + ["--out", str(tmp_path / "x"), "--executor", "threads", "--ray-address", "auto"]
    )
    assert mixed.exit_code != 0 and "--ray-address goes with --executor ray" in mixed.output


FEVER_SUITE = """name: fever-on-ray
dataset:
  loader: fever
  path: {path}
  options: {{idk_credit: 0.5}}
  limit: 3
  sample: true
knowledge_base:
  builder: fever-wiki
model: {{id: scripted}}
systems: [p003/vanilla-rag]
metrics: [accuracy]
executor: ray
concurrency: 2
"""


def test_workers_score_with_the_suites_loader_options(tmp_path, local_ray, monkeypatch):
    """A worker scores with the driver's loader, so a non-default option holds there too: FEVER's
    idk_credit 0.5 for an "I don't know" (a loader built afresh on the worker gave 0.3)."""
    from provbench import registry
    from provbench.testing import scripted_llm

    # plugin files earlier tests loaded in this process are no module a worker could import
    own = registry.make_plugin_manager()
    monkeypatch.setattr(registry, "default_plugin_manager", lambda: own)

    # the three sampled claims' pages link to nothing, so their KB has no relations and a run refuses it
    # (kb.health); this test is about scoring on the workers, which reads no relation
    monkeypatch.setattr("provbench.runner.check_run_kb", lambda *args, **kwargs: [])

    suite = tmp_path / "fever.yaml"
    suite.write_text(FEVER_SUITE.format(path=HERE.parent / "datasets" / "fever-mini" / "dev.jsonl"))
    idk = {"label": "I don't know", "explanation": "Not enough evidence.", "cited": []}
    llm = scripted_llm([idk] * 20, cache_dir=tmp_path / "cache", max_concurrency=2)
    run_dir = run_suite(suite, out=tmp_path / "run", llm=llm, write_report=False)
    records = list(RunStore(run_dir).load_records().values())
    assert len(records) == 3 and all(r.trace.outcome == "abstained" for r in records)
    assert len(llm.backend.calls) == 0  # the workers answered
    assert [r.scores["accuracy"] for r in records] == [0.5] * 3


def test_a_timed_out_unit_retires_its_ray_worker_and_a_fresh_one_runs_the_rest(tmp_path, local_ray):
    """One worker running one unit at a time: a system that hangs is recorded failed at its timeout,
    its worker (and the hung thread in it) is killed and replaced, and the other units run there."""
    import time

    from robust_helpers import question, run, write_suite

    questions = [question("hang", "hang"), question("good-1"), question("good-2")]
    suite = write_suite(tmp_path / "s", questions, ["bad"], concurrency=1, timeout=3)
    suite.write_text(suite.read_text() + "executor: ray\n")
    started = time.monotonic()
    out = run(suite, tmp_path / "run")
    records = {r.key.question_id: r for r in RunStore(out).load_records().values()}
    assert time.monotonic() - started < 50  # the hung system waits 60 s
    assert records["hang"].status == "failed" and "unit_timeout_s (3 s)" in records["hang"].error
    assert records["good-1"].status == records["good-2"].status == "ok", records
