"""Run startup: a run over a knowledge base already built embeds its queries in a child process
(the run's own process never imports the embedding stack), with the vectors of the in-process model,
and the command exits promptly with its status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from provbench.kb.embed_process import EmbeddingProcess
from provbench.kb.embeddings import query_vector
from provbench.testing.server import LoopbackServer

REPO = Path(__file__).resolve().parents[1]
SUITE = """\
name: startup
dataset: {{loader: 2wiki, path: "{dataset}", limit: 3}}
knowledge_base: {{builder: 2wiki-paper000, options: {{extract: false, summarize: false}}, directory: kb}}
model: {{id: openai/bench, params: {{api_base: "{api_base}", api_key: none}}}}
systems: [rag, graphrag]
report: {{bootstrap_resamples: 100, subgraph_pictures: false}}
"""


def test_query_vectors_from_the_child_process_are_the_in_process_ones():
    texts = ["Who directed Glass Harbor?", "Where was the director of Glass Harbor born?", "x"]
    child = EmbeddingProcess()
    try:
        for text in texts:
            assert np.array_equal(child.embed(text), query_vector(text))
    finally:
        child.close()


def retrieved(run: Path) -> dict[str, list]:
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    return {f"{r['key']['system']}|{r['key']['question_id']}": r["trace"]["retrieved"] for r in records}


def test_a_run_over_a_built_kb_embeds_in_a_child_and_exits_with_its_status(tmp_path):
    from provbench.llm import make_llm
    from provbench.runner import build_suite_kb, run_suite

    with LoopbackServer(latency_s=0.0) as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE.format(dataset=REPO / "datasets" / "2wiki-mini" / "dev.json", api_base=server.api_base))
        build_suite_kb(suite)
        cli = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-m",
                "provbench.cli",
                "run",
                str(suite),
                "--out",
                str(tmp_path / "cli-run"),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            timeout=600,
        )
        assert cli.returncode == 0, cli.stdout + cli.stderr[-3000:]
        assert "report: " in cli.stdout  # flushed before the prompt exit
        imported = {line.rsplit("|", 1)[-1].strip() for line in cli.stderr.splitlines() if "import time:" in line}
        assert "torch" not in imported and "sentence_transformers" not in imported
        # the same suite with the model in this process (an injected client runs no warm-up)
        llm = make_llm("openai/bench", api_base=server.api_base, api_key="none")
        in_process = run_suite(suite, out=tmp_path / "in-process", llm=llm, write_report=False)
    assert retrieved(tmp_path / "cli-run") == retrieved(in_process)
    assert len(retrieved(in_process)) == 6


@pytest.mark.parametrize("module", ["llama_index.core", "torch"])
def test_the_warm_up_thread_starts_after_llamaindex_and_torch_are_imported(module):
    """A knowledge base to build imports LlamaIndex on the main thread while the warm-up thread
    loads the embedding model: the same package imported from both at once failed at random. scipy
    (nltk, the controls' draws) reads torch.Tensor once torch is in sys.modules: half imported by
    the thread, "partially initialized module 'torch' has no attribute 'Tensor'"."""
    probe = (
        "import sys, threading\n"
        "from provbench import execution\n"
        "seen = []\n"
        "start = threading.Thread.start\n"
        f"m = lambda: sys.modules.get({module!r})\n"
        "done = lambda: m() is not None and not getattr(m().__spec__, '_initializing', False)\n"
        "threading.Thread.start = lambda self: (seen.append(done()), start(self))[1]\n"
        "execution.WarmUp(kb_built=False).before_units()\n"
        "print(seen[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=os.environ, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "True"


def test_spawn_starts_the_loopback_server_in_a_child_process_that_answers():
    import json
    import urllib.request

    from provbench.testing.server import spawn

    proc, api_base = spawn(0.0, idle=30)
    try:
        body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": "hi"}]}).encode()
        request = urllib.request.Request(f"{api_base}/chat/completions", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert json.load(reply)["choices"][0]["message"]["content"]
        assert proc.poll() is None  # the server runs apart from this process
    finally:
        proc.kill()
        proc.wait()
