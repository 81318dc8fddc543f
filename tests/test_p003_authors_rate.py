"""The authors' hallucination rate (Table I's row with ``hallucination_row: authors``): its quirks
by hand, the metric's score per record, and, where the authors' repository is at hand, their
stored answers of the run behind Table I reproducing the paper's 0.170 and 0.147."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from statistics import fmean

import pytest

from p003_helpers import PaperBackend, mini_kb, run  # noqa: F401 - mini_kb is a fixture
from provbench.errors import UserError
from provbench.model import BASELINE, RunRecord, UnitKey
from provbench.plugin_api import MetricContext

DOCS = ["Roman Atwood is an American vlogger and prankster.", "The history of art. He acted in films"]


@pytest.mark.parametrize(
    "answer, rate",
    [
        ("[Graph coverage low (4 facts)] I don't know.", 0.0),  # hedged, after the note
        ("The evidence is unclear about Ryan.", 0.0),  # a hedge anywhere
        ("Yes, Roman Atwood is a content creator.", 0.5),  # content, creator unsupported
        ("Roman Atwood acted in films.", 0.0),  # "acted", "films" are source words
        ("Roman Atwood is an actor.", 1 / 3),  # no stemming: "actor" is not "acted"
        ("Art by Roman Atwood.", 1 / 3),  # "art" vs "art.": 3 letters, no prefix rule
        ("Americans.", 0.0),  # starts with the source word "american"
        ("[a note] [b] Roman", 0.5),  # only the first note goes: "[b]" counts
        ("Yes.", 0.0),  # no content word
    ],
)
def test_the_authors_definition_by_hand(answer, rate):
    from provbench_plugins.papers.p003_ga_rag.authors_rate import authors_hallucination_rate

    assert authors_hallucination_rate(answer, DOCS) == pytest.approx(rate)


AUTHORS_REPO = Path(
    os.environ.get("P003_AUTHORS_REPO", "/work/.mirror/Zoro621+Graph-Augmented-Retrieval-Augmented-Generation/repo")
)
TABLE_ONE_RUN = "results/detailed_results_20251125_233817.json"


@pytest.mark.skipif(not AUTHORS_REPO.exists(), reason="the authors' repository (P003_AUTHORS_REPO) is not at hand")
def test_the_authors_stored_answers_reproduce_the_papers_hallucination_rates():
    """Their 20 baseline and 20 GA-RAG answers, with the documents each retrieved: the means are
    the paper's 0.170 and 0.147 (their comparison block, to the last digit)."""
    from provbench_plugins.papers.p003_ga_rag.authors_rate import authors_hallucination_rate

    stored = json.loads(
        subprocess.run(
            ["git", "-C", str(AUTHORS_REPO), "show", f"HEAD:{TABLE_ONE_RUN}"], check=True, capture_output=True
        ).stdout
    )
    for side, key, paper in (("baseline_results", "baseline", 0.170), ("ga_rag_results", "graph_augmented", 0.147)):
        mean = fmean(authors_hallucination_rate(r["answer"], r["retrieved_docs"]) for r in stored[side])
        assert mean == pytest.approx(stored["comparison"][key]["hallucination_rate"], abs=1e-12)
        assert round(mean, 3) == paper


def test_the_metric_scores_the_authors_rate_of_the_answer_against_the_pages(mini_kb):
    from provbench_plugins.papers.p003_ga_rag.authors_rate import authors_hallucination_rate
    from provbench_plugins.papers.p003_ga_rag.metrics import TableOne, page_texts
    from provbench_plugins.papers.p003_ga_rag.systems import VanillaRAG

    kb, questions = mini_kb
    metric = TableOne(judge=False, ragas=False, hallucination_row="authors")
    for label, expected in (("SUPPORTS", 1.0), ("I don't know", 0.0)):  # an abstention is the authors' hedge
        reply = {"label": label, "explanation": "Zorblax quintessence.", "cited": [1]}
        trace, _ = run(VanillaRAG, kb, questions[0], backend=PaperBackend(passages_reply=reply))
        record = RunRecord(
            key=UnitKey(question_id=questions[0].id, system="vanilla-rag", condition=BASELINE), trace=trace
        )
        scores = metric.score(record, questions[0], MetricContext(view=kb.view()))
        assert scores["hallucination_rate_authors"] == expected
    assert authors_hallucination_rate("Zorblax quintessence.", page_texts(trace, kb.view())) == 1.0
    with pytest.raises(UserError, match="hallucination_row=.both.: Input should be .provbench. or .authors."):
        TableOne(hallucination_row="both")
