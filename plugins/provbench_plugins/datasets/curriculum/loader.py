"""Loader for concept-graph question sets such as ``datasets/curriculum-mini`` (paper 002).

A dataset is a directory (or its ``questions.jsonl``) holding:

* ``concepts.csv|jsonl`` and ``edges.csv|jsonl``: the concept graph (see
  :mod:`provbench_plugins.kb_builders.concepts.files`); their absolute paths go into each
  question's ``metadata["concept_graph"]`` so the ``concept-graph`` builder finds them;
* ``questions.jsonl``: one object per line: ``id``, ``question``, ``answer`` (a concept's name
  or alias; null when the graph cannot answer it), ``answerable`` (default true; false marks a
  question to which abstaining is the right reply), ``hops`` (the answer's distance in edges
  from the nearest concept the question names), ``type``, and optionally the gold chain:
  ``chain_from`` (a concept id) and ``chain`` (edge ids in order, each touching the concept the
  walk has reached; edges that are not invalidated; the walk passes the answer), and
  ``stale_answer`` (the concept a system reaches by following an invalidated edge).

``Question.gold`` holds the chain (``provbench.gold``): its edges as triples of concept names in
order (``ordered=True``) and the concepts along it (``entities``), so "a prompt holds the gold
evidence" means every edge of the chain appears as a relation line. ``metadata`` carries
``answerable`` (the convention abstention metrics read), ``hops``, ``answer_id``,
``chain_edges``, ``stale_answer`` and the concept graph's paths.

Scoring maps the answer to a concept through the dataset's concept and alias list
(:mod:`.scoring`) and compares concept ids: ``accuracy`` is 1 when the answer names the gold
concept and no other. An unanswerable question is right (accuracy 1) only when the system
abstained (no answer), wrong when it answered anything.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from provbench import hookimpl
from provbench.errors import UserError
from provbench.gold import GoldEvidence, GoldTriple
from provbench.jsonlines import located, read_json_lines
from provbench.model import Question
from provbench.plugin_api import DatasetLoader

from provbench_plugins.kb_builders.concepts.files import Concept, ConceptEdge, read_concepts, read_edges

from .scoring import ConceptNames, concept_names

LOADER_NAME = "curriculum"
QUESTIONS_FILE = "questions.jsonl"


class ConceptGraph:
    """The dataset's concepts and edges, as the loader resolves names and chains against them."""

    def __init__(self, files: dict[str, str]):
        self.files = files
        self.concepts: dict[str, Concept] = {c.id: c for c in read_concepts(Path(files["concepts"]))}
        self.edges: dict[str, ConceptEdge] = {e.id: e for e in read_edges(Path(files["edges"]), set(self.concepts))}
        self.names: ConceptNames = concept_names(files["concepts"])


class CurriculumLoader(DatasetLoader):
    """Questions over a concept graph in plain files, with gold chains; unanswerable ones are marked."""

    name = LOADER_NAME
    facets = ("type", "category")
    provides_gold = True

    def claims(self, source: str | Path) -> bool:
        """A directory, or its questions.jsonl, with the concept and edge files beside the questions."""
        path = Path(source)
        questions_path = path / QUESTIONS_FILE if path.is_dir() else path
        if questions_path.name != QUESTIONS_FILE or not questions_path.is_file():
            return False
        try:
            return set(graph_files(questions_path.parent)) == {"concepts", "edges"}
        except UserError:  # both a .csv and a .jsonl: load() says so
            return True

    def load(
        self, source: str | Path, *, limit: int | None = None, seed: int = 0, sample: bool = False, **options: Any
    ) -> list[Question]:
        if options:
            raise UserError(f"dataset loader {LOADER_NAME!r}: unknown options {sorted(options)}")
        path = Path(source)
        questions_path = path / QUESTIONS_FILE if path.is_dir() else path
        if not questions_path.is_file():
            raise UserError(f"{questions_path}: no such file (a {LOADER_NAME} dataset needs {QUESTIONS_FILE})")
        rows = [
            (number, checked_row(located(questions_path, number), row))
            for number, row in read_json_lines(questions_path)
        ]
        files = graph_files(questions_path.parent)
        if set(files) != {"concepts", "edges"}:
            raise UserError(
                f"{questions_path.parent}: a {LOADER_NAME} dataset needs concepts.csv|jsonl and "
                "edges.csv|jsonl beside its questions (answers are scored as concepts of the graph)"
            )
        graph = ConceptGraph(files)
        questions = [question(located(questions_path, number), row, graph) for number, row in rows]
        _check_unique(questions_path, questions)
        if sample and limit is not None:
            questions = random.Random(seed).sample(questions, min(limit, len(questions)))
        return questions[:limit] if limit is not None else questions

    def normalize(self, text: str) -> str:
        from .scoring import normalize_name

        return normalize_name(text)

    def score_answer(self, question: Question, prediction: str | None) -> dict[str, float]:
        if question.metadata.get("answerable", True) is False:
            return {"accuracy": float(prediction is None)}
        names = concept_names(question.metadata["concept_graph"]["concepts"])
        return {"accuracy": float(names.concept_of(prediction) == question.metadata["answer_id"])}


def checked_row(where: str, row: dict[str, Any]) -> dict[str, Any]:
    """A question row whose fields have the right types (names are resolved later, on the graph)."""
    for name in ("id", "question"):
        if not isinstance(row.get(name), str) or not row[name].strip():
            raise UserError(f"{where}: field {name!r} must be a non-empty string")
    answerable = row.get("answerable", True)
    if not isinstance(answerable, bool):
        raise UserError(f"{where}: field 'answerable' must be true or false")
    answer = row.get("answer")
    if answerable and (not isinstance(answer, str) or not answer.strip()):
        raise UserError(f"{where}: field 'answer' must be a non-empty string (or set answerable: false)")
    if not answerable and answer not in (None, ""):
        raise UserError(f"{where}: field 'answer' must be null when answerable is false")
    if "aliases" in row:
        raise UserError(f"{where}: field 'aliases': a concept's aliases belong in the concepts file")
    hops = row.get("hops", 0)
    if not isinstance(hops, int) or isinstance(hops, bool) or hops < 0:
        raise UserError(f"{where}: field 'hops' must be a non-negative integer")
    chain = row.get("chain")
    if ("chain" in row) != ("chain_from" in row):
        raise UserError(f"{where}: fields 'chain_from' and 'chain' go together")
    if chain is not None and (not isinstance(chain, list) or not chain or not all(isinstance(e, str) for e in chain)):
        raise UserError(f"{where}: field 'chain' must be a non-empty list of edge ids")
    if chain is not None and not answerable:
        raise UserError(f"{where}: field 'chain': an unanswerable question has no gold chain")
    return row


def question(where: str, row: dict[str, Any], graph: ConceptGraph) -> Question:
    answerable = row.get("answerable", True)
    answer_id = concept_named(where, "answer", row["answer"], graph) if answerable else None
    metadata: dict[str, Any] = {
        "answerable": answerable,
        "hops": row.get("hops", 0),
        "concept_graph": graph.files,
        "answer_id": answer_id,
    }
    gold = None
    if row.get("chain") is not None:
        gold = gold_chain(where, row["chain_from"], row["chain"], answer_id, graph)
        metadata["chain_edges"] = list(row["chain"])
    if row.get("stale_answer") is not None:
        stale = concept_named(where, "stale_answer", row["stale_answer"], graph)
        if stale == answer_id:
            raise UserError(f"{where}: field 'stale_answer' names the answer itself")
        metadata["stale_answer"] = graph.concepts[stale].name
    answer_concept = graph.concepts.get(answer_id) if answer_id else None
    return Question(
        id=row["id"],
        question=row["question"],
        answer=row["answer"] or "",
        aliases=list(answer_concept.aliases) if answer_concept else [],
        dataset=LOADER_NAME,
        type=str(row.get("type", "")),
        gold=gold,
        metadata=metadata,
        category=f"{metadata['hops']}-hop" if answerable else "unanswerable",
    )


def concept_named(where: str, field: str, value: Any, graph: ConceptGraph) -> str:
    found = graph.names.concept_of(value) if isinstance(value, str) else None
    if found is None:
        raise UserError(
            f"{where}: field {field!r}: {value!r} is not the name or alias of one concept of "
            f"{Path(graph.files['concepts']).name}"
        )
    return found


def gold_chain(where: str, start: Any, chain: list[str], answer_id: str, graph: ConceptGraph) -> GoldEvidence:
    """The chain as ordered triples of names, walked from ``start`` (every problem located)."""
    if start not in graph.concepts:
        raise UserError(f"{where}: field 'chain_from': unknown concept id {start!r}")
    walk, triples = [start], []
    for edge_id in chain:
        edge = graph.edges.get(edge_id)
        if edge is None or walk[-1] not in (edge.source, edge.target):
            problem = "unknown edge id" if edge is None else f"does not touch {walk[-1]!r}"
            raise UserError(f"{where}: field 'chain': edge {edge_id!r}: {problem}")
        if edge.invalidated_at:
            raise UserError(f"{where}: field 'chain': edge {edge_id!r} is invalidated")
        walk.append(edge.target if edge.source == walk[-1] else edge.source)
        triples.append(
            GoldTriple(
                subject=graph.concepts[edge.source].name,
                relation=edge.relation,
                object=graph.concepts[edge.target].name,
            )
        )
    if answer_id not in walk:
        raise UserError(f"{where}: field 'chain' never reaches the answer {graph.concepts[answer_id].name!r}")
    return GoldEvidence(triples=triples, ordered=True, entities=[graph.concepts[c].name for c in walk])


def graph_files(directory: Path) -> dict[str, str]:
    """Absolute paths of the concept and edge files beside the questions ({} if there are none)."""
    found = {}
    for kind in ("concepts", "edges"):
        candidates = [directory / f"{kind}{suffix}" for suffix in (".csv", ".jsonl")]
        existing = [p for p in candidates if p.is_file()]
        if len(existing) > 1:
            raise UserError(f"{directory}: both {existing[0].name} and {existing[1].name}; keep one")
        if existing:
            found[kind] = str(existing[0].resolve())
    return found


def _check_unique(path: Path, questions: list[Question]) -> None:
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise UserError(f"{path}: question id {q.id!r} appears twice")
        seen.add(q.id)


@hookimpl
def provbench_register_dataset_loaders():
    return {LOADER_NAME: CurriculumLoader}
