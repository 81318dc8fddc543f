"""The Ray executor: a suite on a local Ray cluster gives the same records as on threads, and the
LLM replies its workers fetched reach the driver's cache (a later run makes no call)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ray = pytest.importorskip("ray")

from runner_helpers import builtin_plugin_manager, write_builtin_suite  # noqa: E402

from provbench.runner import run_suite  # noqa: E402
from provbench.store import RunStore  # noqa: E402
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


@pytest.fixture
def local_ray():
    # workers import the test helpers (toy plugins) as the driver does
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}})
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_executor_gives_the_records_of_threads_and_brings_the_cache_home(tmp_path, local_ray):
    threads_dir, _ = run(tmp_path / "threads", tmp_path / "run-threads", "threads")
    ray_dir, ray_llm = run(tmp_path / "ray", tmp_path / "run-ray", "ray")
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
    calls = [call for record in RunStore(resumed_dir).load_records().values() if record.trace
             for call in record.trace.llm_calls]
    assert calls and all(call.cached for call in calls)
    assert projected(resumed_dir) == expected


def test_ray_data_embedding_matches_the_in_process_embedder(local_ray):
    """The batch path for very large corpora, on a small input: same vectors, same order."""
    import numpy as np

    from provbench.kb.embeddings import embed_texts
    from provbench.kb.ray_embed import embed_texts_ray

    texts = [f"Passage {i} about river number {i % 7} and town {i % 3}." for i in range(23)]
    vectors = embed_texts_ray(texts, batch_size=5, concurrency=1)
    assert vectors.shape == (23, 384) and vectors.dtype == np.float32
    assert np.allclose(vectors, embed_texts(texts), atol=1e-5)
