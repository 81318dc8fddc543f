"""A hand-built labelled medical graph for paper 001's tests (real builder, Kùzu, embeddings).

fasting -IS RISK FACTOR FOR-> corvane fever -CAN LEAD TO-> mirel disease -AFFECTS-> spleen
fasting -CAUSES-> night cough -IS SIGN OF-> tarsik anaemia -RELATED TO-> pale gums -AFFECTS-> spleen
(the second route from fasting to spleen is one hop longer)

Also the records paper 001's analyses read, built in memory: a four-node path, question q's
baseline on it, and one perturbation unit per variant.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from provbench.model import RunRecord, Trace, UnitKey, VariantInfo
from provbench_plugins.papers.p001_kgrag_ex import analysis
from provbench_plugins.papers.p001_kgrag_ex.paths import enumerate_variants, make_path

TRIPLES = [
    ("fasting", "Risk Factors", "IS RISK FACTOR FOR", "corvane fever", "Diseases", "a.txt", "a_0"),
    ("corvane fever", "Diseases", "CAN LEAD TO", "mirel disease", "Diseases", "a.txt", "a_0"),
    ("mirel disease", "Diseases", "AFFECTS", "spleen", "Body Parts", "b.txt", "b_0"),
    ("fasting", "Risk Factors", "CAUSES", "night cough", "Symptoms", "c.txt", "c_0"),
    ("night cough", "Symptoms", "IS SIGN OF", "tarsik anaemia", "Diseases", "c.txt", "c_0"),
    ("tarsik anaemia", "Diseases", "RELATED TO", "pale gums", "Symptoms", "c.txt", "c_0"),
    ("pale gums", "Symptoms", "AFFECTS", "spleen", "Body Parts", "b.txt", "b_0"),
]
CHUNKS = [
    {
        "id": "a_0",
        "title": "Corvane fever",
        "content": "Fasting is a risk factor for corvane fever, which can lead to mirel disease.",
        "source": "a.txt",
    },
    {
        "id": "b_0",
        "title": "Spleen",
        "content": "Mirel disease and pale gums both involve the spleen.",
        "source": "b.txt",
    },
    {
        "id": "c_0",
        "title": "Night cough",
        "content": "Fasting causes night cough, a sign of tarsik anaemia, which is related to pale gums.",
        "source": "c.txt",
    },
]


def write_inputs(folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    corpus, triples = folder / "corpus.jsonl", folder / "triples.csv"
    corpus.write_text("".join(json.dumps(c) + "\n" for c in CHUNKS))
    with triples.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Entity1", "Label1", "Relationship", "Entity2", "Label2", "SourceFilename", "ChunkID"])
        writer.writerows(TRIPLES)
    return corpus, triples


def build_graph(folder: Path):
    from provbench.testing import schema_following_llm
    from provbench_plugins.kb_builders.medical.builder import MedicalKGBuilder

    corpus, triples = write_inputs(folder / "inputs")
    builder = MedicalKGBuilder(corpus=str(corpus), triples=str(triples))
    return builder.build([], folder / "kb", schema_following_llm())


def four_node_path() -> dict:
    nodes = [{"id": f"n{i}", "name": f"N{i}", "label": "Diseases"} for i in range(4)]
    edges = [
        {
            "id": f"r{i}",
            "label": f"R{i}",
            "source": f"n{i}",
            "target": f"n{i + 1}",
            "text_unit": "tu:x",
            "source_file": f"f{i}.txt",
        }
        for i in range(3)
    ]
    return make_path("path:0", nodes, edges)


def baseline(path: dict) -> RunRecord:
    """kgrag-ex's baseline unit of question q: answer A from this one path."""
    return RunRecord(
        key=UnitKey(question_id="q", system="kgrag-ex"),
        trace=Trace(question_id="q", system="kgrag-ex", answer="A", artifacts={"kgrag": {"paths": [path]}}),
    )


def record(kind: str, k: int, changed: bool, answer: str, path: dict) -> RunRecord:
    """The unit of ``path``'s ``k``-th ``kind`` variant (node, edge, subpath), answering ``answer``."""
    data = enumerate_variants([path], kind)[k]
    return RunRecord(
        key=UnitKey(question_id="q", system="kgrag-ex", condition=f"kg-{kind}", variant=data["id"]),
        trace=Trace(question_id="q", system="kgrag-ex", answer=answer),
        scores={"output_changed": float(changed)},
        variant=VariantInfo(**data),
    )


def grouped(path: dict, *variants: tuple[str, int, bool, str]) -> dict:
    """Question q grouped as the analyses read it: its baseline on ``path`` and one unit per
    ``(kind, index, changed, answer)``."""
    units = [record(kind, k, changed, answer, path) for kind, k, changed, answer in variants]
    return analysis.group([baseline(path), *units], "kgrag-ex")
