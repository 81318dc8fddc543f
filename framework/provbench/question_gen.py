"""``provbench generate``: multi-hop questions with their gold chains, sampled from a knowledge
base's own relations, for a user who has documents but no labelled questions (docs/own-data.md).

1. **Hops**: every active relation (not invalidated) whose source text unit is known; the text
   unit's sentence naming both ends (else the one naming the object, else the whole text unit) is
   the hop's gold sentence, so the gold is text the knowledge base holds.
2. **Chains** of ``hops`` relations through distinct entities, walked forward along the relations'
   direction. A chain whose relation labels, followed from its first entity, reach more than one
   entity is left out: its question would have several right answers. Chains are drawn with a
   seeded random generator, one per (first entity, labels), so a run is reproducible.
3. **Phrasing**: the suite's model writes the question from the chain's facts (a JSON schema asks
   for one string). A question that names the answer or an entity in between, does not name the
   first entity, or is not a question is replaced by a fixed template naming the relations, and
   the row says which it got (``phrasing``), so a model that cannot phrase (``schema-following``)
   still yields questions that run.
4. **Rows** in the ``qa`` loader's format (JSON lines): question, answer (the chain's last entity),
   ``supporting_sentences`` (one per hop, with its file), ``gold_path`` (the entities) and
   ``gold_triples`` (the chain), so the gold maps onto the same knowledge base
   (:mod:`provbench.kb.goldmap`) and ``provbench validate`` runs on them.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UserError

if TYPE_CHECKING:
    from .kb import KnowledgeBase

PURPOSE = "generate-question"
MAX_HOPS = 4
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
QUESTION_SCHEMA = {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}


@dataclass(frozen=True)
class Hop:
    """One relation of the knowledge base, by its ends' names, with its gold sentence."""

    subject_id: str
    subject: str
    relation: str
    object_id: str
    object: str
    sentence: str
    document: str


def read_hops(kb: "KnowledgeBase", files: dict[str, str]) -> list[Hop]:
    """Every active relation with a known source text unit (``files``: text unit -> its file)."""
    rows = kb.store.rows(
        "MATCH (a:Entity)-[r:LINKS]->(b:Entity), (c:Chunk {id: r.triplet_source_id}) "
        "WHERE r.invalidated_at IS NULL AND a.id <> b.id "
        "RETURN a.id, a.name, r.label, b.id, b.name, c.id, c.text, c.ref_doc_id ORDER BY r.id"
    )
    return [
        Hop(a_id, a, label, b_id, b, hop_sentence(text or "", a, b), files.get(unit) or doc or "")
        for a_id, a, label, b_id, b, unit, text, doc in rows
        if a and b and label
    ]


def hop_sentence(text: str, subject: str, obj: str) -> str:
    """The sentence of ``text`` naming both ends, else the object, else ``text`` itself."""
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
    for wanted in ((subject, obj), (obj,)):
        found = next((s for s in sentences if all(w.casefold() in s.casefold() for w in wanted)), None)
        if found:
            return found
    return text.strip()


def sample_chains(hops: list[Hop], length: int, count: int, seed: int = 0) -> list[tuple[Hop, ...]]:
    """Up to ``count`` chains of ``length`` hops with one answer each (module docstring, step 2)."""
    if not 1 <= length <= MAX_HOPS:
        raise UserError(f"--hops must be 1 to {MAX_HOPS}, got {length}")
    out_of: dict[str, list[Hop]] = {}
    for hop in hops:
        out_of.setdefault(hop.subject_id, []).append(hop)
    chains = [chain for start in sorted(out_of) for chain in _walks(out_of, (start,), length)]
    random.Random(seed).shuffle(chains)
    chosen, seen = [], set()
    for chain in chains:
        key = (chain[0].subject_id, tuple(h.relation for h in chain))
        if key not in seen and _single_answer(out_of, chain) and not _labels_name_a_hop_end(chain):
            seen.add(key)
            chosen.append(chain)
        if len(chosen) == count:
            break
    return chosen


def _walks(out_of: dict[str, list[Hop]], path: tuple[str, ...], left: int, done: tuple[Hop, ...] = ()):
    if left == 0:
        yield done
        return
    for hop in out_of.get(path[-1], []):
        if hop.object_id not in path:
            yield from _walks(out_of, (*path, hop.object_id), left - 1, (*done, hop))


def _single_answer(out_of: dict[str, list[Hop]], chain: tuple[Hop, ...]) -> bool:
    """Following the chain's labels from its first entity reaches one answer name only."""
    reached = {chain[0].subject_id}
    for hop in chain:
        reached = {h.object_id for r in reached for h in out_of.get(r, []) if h.relation == hop.relation}
    names = {h.object.casefold() for hops in out_of.values() for h in hops if h.object_id in reached}
    return len(names) == 1


def _labels_name_a_hop_end(chain: tuple[Hop, ...]) -> bool:
    """A relation label that names an entity the chain reaches ('vell harbor' to Vell Harbor, as an
    extractor may label a relation by its object) gives the answer away in the template question."""
    labels = " | ".join(_label(h.relation) for h in chain)
    return any(re.search(rf"\b{re.escape(_label(h.object))}\b", labels) for h in chain)


def _label(relation: str) -> str:
    return " ".join(relation.replace("_", " ").replace("-", " ").split()).lower()


def template_question(chain: tuple[Hop, ...]) -> str:
    steps = " and then ".join(f"'{_label(h.relation)}'" for h in chain)
    return f"Starting from {chain[0].subject}, which entity do you reach by following {steps}?"


def phrasing_problem(question: str, chain: tuple[Hop, ...]) -> str | None:
    """Why a model's question cannot stand for the chain; None when it can."""
    text = question.casefold()
    if not question.strip().endswith("?"):
        return "not a question"
    if chain[0].subject.casefold() not in text:
        return "does not name the first entity"
    named = next((h.object for h in chain if h.object.casefold() in text), None)
    return f"names {named!r}, which the chain reaches" if named else None


def phrase(llm: Any, chain: tuple[Hop, ...]) -> tuple[str, str]:
    """(question, how it was phrased): the model's question, or the template and why."""
    facts = "\n".join(f"- {h.sentence}  [{h.subject} --{_label(h.relation)}--> {h.object}]" for h in chain)
    prompt = (
        f"Facts, in order:\n{facts}\n\nWrite one question whose only right answer is {chain[-1].object}. "
        f"It must name {chain[0].subject}, need every fact in turn, and name no other entity of the facts. "
        'Reply with JSON: {"question": "..."}'
    )
    try:
        reply = llm.chat(
            [{"role": "user", "content": prompt}], schema=QUESTION_SCHEMA, purpose=PURPOSE, temperature=0.0
        )
        question = str((reply.data or {}).get("question") or "").strip()
    except Exception as exc:  # noqa: BLE001 - a failed call falls back to the template, and says so
        return template_question(chain), f"template (the model's call failed: {type(exc).__name__})"
    problem = phrasing_problem(question, chain)
    return (
        (question, "model")
        if problem is None
        else (template_question(chain), f"template (the model's question {problem})")
    )


def question_row(number: int, chain: tuple[Hop, ...], question: str, phrasing: str) -> dict[str, Any]:
    """One row of the ``qa`` loader's format."""
    return {
        "id": f"gen-{number:03d}",
        "question": question,
        "answer": chain[-1].object,
        "supporting_sentences": [{"document": h.document, "text": h.sentence} for h in chain],
        "gold_path": [chain[0].subject, *(h.object for h in chain)],
        "gold_triples": [[h.subject, h.relation, h.object] for h in chain],
        "type": f"generated {len(chain)}-hop",
        "phrasing": phrasing,
    }


def generate_questions(
    kb: "KnowledgeBase", llm: Any, files: dict[str, str], *, count: int, hops: int, seed: int = 0
) -> list[dict[str, Any]]:
    """The rows of up to ``count`` questions of ``hops`` hops each; a UserError when the graph holds no such chain."""
    found = read_hops(kb, files)
    chains = sample_chains(found, hops, count, seed)
    if not chains:
        hint = "try fewer --hops" if hops > 1 else "questions need relations whose source text unit is known"
        raise UserError(
            f"the knowledge base at {kb.path} holds no chain of {hops} relation(s) with one answer "
            f"({len(found)} relation(s) with a source text unit): {hint}"
        )
    return [question_row(n, chain, *phrase(llm, chain)) for n, chain in enumerate(chains, start=1)]


def write_rows(rows: list[dict[str, Any]], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def generated_suite(suite: Path, questions: Path, kb_dir: Path, out: Path) -> str:
    """A copy of ``suite`` (its comments kept) that reads the generated ``questions`` on the knowledge
    base they were sampled from (``knowledge_base.directory``), and its controls on them too; paths
    are relative to ``out``'s folder. The controls build their own KB, as ``validate`` always does."""
    import io
    import os

    from ruamel.yaml import YAML

    yaml = YAML()  # round trip: comments, flow lists and the suite's own indentation kept
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096  # no reflowed lines
    data = yaml.load(suite.read_text(encoding="utf-8"))
    base = out.parent.resolve()

    def retarget(block: Any) -> None:
        """The dataset block, edited in place (its comments stay): the generated questions."""
        documents = (block.get("options") or {}).get("documents")
        folder = (suite.parent / block.get("path", ".")).resolve().parent / documents if documents else None
        for key in [k for k in block if k not in ("loader", "path", "options")]:
            del block[key]  # a limit or sample of the old questions means nothing for these
        block["loader"], block["path"] = "qa", os.path.relpath(questions.resolve(), base)
        if folder is None:
            block.pop("options", None)
            return
        options = block["options"]
        for key in [k for k in options if k != "documents"]:
            del options[key]  # field names of the old file: the generated one uses the standard ones
        options["documents"] = os.path.relpath(folder.resolve(), questions.resolve().parent)

    data["name"] = f"{data.get('name', suite.stem)}-generated"
    data["description"] = f"Questions generated by `provbench generate` from the knowledge base of {suite.name}."
    if not isinstance(data.get("dataset"), dict):
        data["dataset"] = {}
    retarget(data["dataset"])
    data["knowledge_base"]["directory"] = os.path.relpath(kb_dir.resolve(), base)
    if isinstance(data.get("controls"), dict) and data["controls"].get("dataset"):
        retarget(data["controls"]["dataset"])
    text = io.StringIO()
    yaml.dump(data, text)
    return (
        f"# Written by `provbench generate` from {suite.name}: the generated questions, the same KB.\n"
        + text.getvalue()
    )
