"""Generator of ``datasets/medical-mini/``: an invented medical world, a StatPearls-like corpus
written from it, the knowledge graph as triples, and MedMCQA-form questions needing 2-3 hops
(and bridge questions whose answer hangs on one inner triple of a 3-5 hop path)
(``dev.jsonl``, and ``mirage-benchmark.json`` in MIRAGE's form with a "medmcqa" and an "mmlu" part).
Each question carries its gold path (``gold``, in :class:`provbench.gold.GoldEvidence`'s form): the
chain of triples, as the graph states them, from a question entity to the answer, and the chain's
entities in order; an "EXCEPT" question's gold is the unordered set of triples linking its disease
to the three options that are not the answer.

The diseases, drugs and tests are invented (so a model cannot answer from memory and must follow
the graph). Each disease gets, by a seeded draw, a risk factor, a hallmark symptom, an affected
body part, a diagnostic test, a medication and a complication (another disease). Each disease
has one article (a source file) of two chunks. Questions follow the paper's retrieval shape: two
entities named in the question are joined by a 2-3 hop path whose middle holds the answer's key.

    python -m provbench_tools.medical_mini --out datasets/medical-mini --seed 0
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from dataclasses import dataclass
from pathlib import Path

DISEASES = [
    "Corvane fever",
    "Halden syndrome",
    "Mirel disease",
    "Tarsik anaemia",
    "Ostrev palsy",
    "Velmar nephropathy",
    "Quillon arthritis",
    "Brask dermatosis",
]
RISK_FACTORS = [
    "river-reed exposure",
    "night-shift work",
    "copper dust inhalation",
    "high-salt diet",
    "prolonged fasting",
    "tick bites",
    "smoked-fish diet",
    "cold-water swimming",
]
SYMPTOMS = [
    "blue fingertips",
    "night cough",
    "metallic taste",
    "drooping eyelid",
    "itching palms",
    "ankle swelling",
    "morning stiffness",
    "silver skin scales",
]
BODY_PARTS = [
    "left kidney",
    "inner ear",
    "spleen",
    "facial nerve",
    "bone marrow",
    "knee joint",
    "upper dermis",
    "pancreas",
]
TESTS = [
    "Pell stain",
    "Dorran reflex test",
    "copper clearance assay",
    "Vesk urine panel",
    "marrow smear",
    "tilt-table scan",
    "Ruhl antibody test",
    "scale biopsy",
]
MEDICATIONS = ["ambrolex", "sitravine", "coperase", "delmitol", "fenquarin", "hestrol", "orbazine", "talvocid"]

SUBJECTS = {
    "body_part": "Anatomy",
    "medication": "Pharmacology",
    "test": "Pathology",
    "symptom": "Medicine",
    "bridge": "Pathology",
}
# the relations the corpus states (the graph's edge labels)
RISK, AFFECTS, CAUSES = "IS RISK FACTOR FOR", "AFFECTS", "CAUSES"
DETECTED, TREATED, LEADS = "IS DETECTED BY", "IS TREATED WITH", "CAN LEAD TO"


@dataclass
class Disease:
    name: str
    risk: str
    symptom: str
    body_part: str
    test: str
    medication: str
    complication: str = ""

    @property
    def source(self) -> str:
        return "article-" + self.name.lower().replace(" ", "-") + ".jsonl"


def make_world(seed: int) -> list[Disease]:
    rng = random.Random(seed)
    lists = [list(x) for x in (RISK_FACTORS, SYMPTOMS, BODY_PARTS, TESTS, MEDICATIONS)]
    for values in lists:
        rng.shuffle(values)
    world = [Disease(name, *(values[i] for values in lists)) for i, name in enumerate(DISEASES)]
    order = list(range(len(world)))
    rng.shuffle(order)
    for a, b in zip(order, order[1:] + order[:1]):  # a cycle: every disease leads to another
        world[a].complication = world[b].name
    return world


# -- corpus: two chunks per disease, each chunk with its triples ------------------------------------


def chunks(d: Disease) -> list[dict]:
    stem = d.source.removesuffix(".jsonl")
    first = (
        f"{d.name} is an uncommon illness of the {d.body_part}. Most patients report {d.risk} in "
        f"the months before onset, and {d.risk} is the best known risk factor for {d.name}. "
        f"The hallmark complaint is {d.symptom}, which {d.name} causes in nearly every case."
    )
    second = (
        f"{d.name} is confirmed with the {d.test}; no other test detects it reliably. First-line "
        f"care is {d.medication}, and {d.name} is treated with {d.medication} for six weeks. Left "
        f"untreated, {d.name} can lead to {d.complication}."
    )
    triples_1 = [
        (d.risk, "Risk Factors", RISK, d.name, "Diseases"),
        (d.name, "Diseases", AFFECTS, d.body_part, "Body Parts"),
        (d.name, "Diseases", CAUSES, d.symptom, "Symptoms"),
    ]
    triples_2 = [
        (d.name, "Diseases", DETECTED, d.test, "Diagnostic Tests"),
        (d.name, "Diseases", TREATED, d.medication, "Medications"),
        (d.name, "Diseases", LEADS, d.complication, "Diseases"),
    ]
    return [
        {"id": f"{stem}_{i}", "title": d.name, "content": text, "source": d.source, "triples": t}
        for i, (text, t) in enumerate(((first, triples_1), (second, triples_2)))
    ]


# -- questions -------------------------------------------------------------------------------------


def _options(rng: random.Random, answer: str, pool: list[str]) -> tuple[list[str], int]:
    options = [answer] + rng.sample([p for p in pool if p != answer], 3)
    rng.shuffle(options)
    return options, options.index(answer) + 1


def gold(triples: list[tuple[str, str, str]], entities: list[str], ordered: bool = True) -> dict:
    """A question's gold evidence in provbench.gold's form (triples as the graph states them)."""
    return {
        "triples": [{"subject": s, "relation": r, "object": o} for s, r, o in triples],
        "ordered": ordered,
        "entities": entities,
    }


def questions(world: list[Disease], seed: int) -> list[dict]:
    rng = random.Random(seed + 1)
    by_name = {d.name: d for d in world}
    items = []
    for i, d in enumerate(world):
        comp = by_name[d.complication]
        kinds = [
            (
                "body_part",
                f"A patient with a history of {d.risk} now has {d.symptom}. Which structure is most likely affected?",
                d.body_part,
                BODY_PARTS,
                "2 hops: risk -> disease -> body part",
                gold([(d.risk, RISK, d.name), (d.name, AFFECTS, d.body_part)], [d.risk, d.name, d.body_part]),
            ),
            (
                "medication",
                f"A patient presents with {d.symptom} and a positive {d.test}. Which drug is first-line care?",
                d.medication,
                MEDICATIONS,
                "2 hops: symptom -> disease -> drug",
                gold([(d.name, CAUSES, d.symptom), (d.name, TREATED, d.medication)], [d.symptom, d.name, d.medication]),
            ),
            (
                "test",
                f"After {d.risk}, a patient develops the illness it predisposes to and later its "
                f"complication, which shows {comp.symptom}. Which test confirms that complication?",
                comp.test,
                TESTS,
                "3 hops: risk -> disease -> complication -> test",
                gold(
                    [(d.risk, RISK, d.name), (d.name, LEADS, comp.name), (comp.name, DETECTED, comp.test)],
                    [d.risk, d.name, comp.name, comp.test],
                ),
            ),
        ]
        kind, text, answer, pool, hops, evidence = kinds[i % len(kinds)]
        options, cop = _options(rng, answer, pool)
        items.append(
            {
                "id": f"mm-{i:02d}",
                "question": text,
                "opa": options[0],
                "opb": options[1],
                "opc": options[2],
                "opd": options[3],
                "cop": cop,
                "exp": hops,
                "subject_name": SUBJECTS[kind],
                "topic_name": d.name,
                "choice_type": "single",
                "gold": evidence,
            }
        )
    for j, d in enumerate(world[:2]):  # "except" questions: MedMCQA's multi choice type
        wrong = rng.choice([x for x in SYMPTOMS if x != d.symptom])
        options = [d.symptom, d.body_part, d.test, wrong]
        rng.shuffle(options)
        linked = [
            (d.risk, RISK, d.name),
            (d.name, CAUSES, d.symptom),
            (d.name, AFFECTS, d.body_part),
            (d.name, DETECTED, d.test),
        ]
        items.append(
            {
                "id": f"mm-x{j}",
                "question": f"A patient exposed to {d.risk} develops the disease it "
                "predisposes to. All of the following are linked to that disease EXCEPT:",
                "opa": options[0],
                "opb": options[1],
                "opc": options[2],
                "opd": options[3],
                "cop": options.index(wrong) + 1,
                "exp": "2 hops: risk -> disease -> features",
                "subject_name": SUBJECTS["symptom"],
                "topic_name": d.name,
                "choice_type": "multi",
                "gold": gold(linked, [d.risk, d.name, d.symptom, d.body_part, d.test], ordered=False),
            }
        )
    items += bridge_questions(world, rng)
    items += end_questions(world, rng)
    return items


BRIDGES = 4  # diseases with a bridge question


def bridge_questions(world: list[Disease], rng: random.Random) -> list[dict]:
    """Questions whose answer hangs on one triple in the middle of the path: the question names a
    disease's symptom and its complication's body part (the path's ends, joined by 3 hops), and
    the answer is the complication, so the gold (what the oracle control needs) is the one triple
    "disease CAN LEAD TO complication" and neither end of the path is planted."""
    by_name = {d.name: d for d in world}
    items = []
    for j, d in enumerate(world[:BRIDGES]):
        comp = by_name[d.complication]
        options, cop = _options(rng, comp.name, DISEASES)
        items.append(
            {
                "id": f"mm-b{j}",
                "question": f"A patient's illness causes {d.symptom}. Left untreated, it "
                f"can lead to a complication that affects the {comp.body_part}. Which disease is that "
                "complication?",
                "opa": options[0],
                "opb": options[1],
                "opc": options[2],
                "opd": options[3],
                "cop": cop,
                "exp": "3 hops: symptom -> disease -> complication -> body part; the answer hangs on the middle triple",
                "subject_name": SUBJECTS["bridge"],
                "topic_name": d.name,
                "choice_type": "single",
                "gold": gold([(d.name, LEADS, comp.name)], [d.name, comp.name]),
            }
        )
    return items


def end_questions(world: list[Disease], rng: random.Random) -> list[dict]:
    """Two longer bridges per disease: the question names a disease's symptom and the body part
    of its third (five hops) or second (four hops) complication; the answer is the third
    complication (gold: the fourth triple, "second CAN LEAD TO third") or the first (gold: the
    second triple). Their planted nodes sit at path positions 3-4 and 1-2, so with the other
    questions (0-2, 1-2, all) no fixed position of the first path is planted on 80 % of them, and
    an explanation blind to the removals that names one fails paper 001's explanation claim."""
    by_name = {d.name: d for d in world}
    items = []
    for j, d in enumerate(world):
        comp = by_name[d.complication]
        comp2 = by_name[comp.complication]
        comp3 = by_name[comp2.complication]
        asked = [
            (
                f"A patient's illness causes {d.symptom}. It can lead to a complication, which leads to a "
                f"second, which leads to a third that affects the {comp3.body_part}. Which disease is that "
                "third complication?",
                comp3.name,
                gold([(comp2.name, LEADS, comp3.name)], [comp2.name, comp3.name]),
                "5 hops: symptom -> disease -> three complications -> body part; the answer hangs on the fourth triple",
            ),
            (
                f"A patient's illness causes {d.symptom}. It can lead to a complication, which in turn can "
                f"lead to a second complication that affects the {comp2.body_part}. Which disease is the "
                "first complication?",
                comp.name,
                gold([(d.name, LEADS, comp.name)], [d.name, comp.name]),
                "4 hops: symptom -> disease -> complication -> second complication -> body part; the answer "
                "hangs on the second triple",
            ),
        ]
        for k, (text, answer, evidence, hops) in enumerate(asked):
            options, cop = _options(rng, answer, DISEASES)
            items.append(
                {
                    "id": f"mm-e{2 * j + k:02d}",
                    "question": text,
                    "opa": options[0],
                    "opb": options[1],
                    "opc": options[2],
                    "opd": options[3],
                    "cop": cop,
                    "exp": hops,
                    "subject_name": SUBJECTS["bridge"],
                    "topic_name": d.name,
                    "choice_type": "single",
                    "gold": evidence,
                }
            )
    return items


def write(out: Path, seed: int) -> None:
    world = make_world(seed)
    out.mkdir(parents=True, exist_ok=True)
    corpus = [c for d in world for c in chunks(d)]
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for c in corpus:
            f.write(json.dumps({k: c[k] for k in ("id", "title", "content", "source")}) + "\n")
    with (out / "kg_triples.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Entity1", "Label1", "Relationship", "Entity2", "Label2", "SourceFilename", "ChunkID"])
        for c in corpus:
            for head, hl, rel, tail, tl in c["triples"]:
                writer.writerow([head, hl, rel, tail, tl, c["source"], c["id"]])
    items = questions(world, seed)
    with (out / "dev.jsonl").open("w", encoding="utf-8") as f:
        for q in items:
            f.write(json.dumps(q) + "\n")
    (out / "mirage-benchmark.json").write_text(json.dumps(mirage(items), indent=1) + "\n", encoding="utf-8")


def mirage(items: list[dict]) -> dict:
    """The same questions as MIRAGE's benchmark.json holds them: a "medmcqa" part, and the
    single-choice ones again as an "mmlu" part (MMLU-medical's form), letters for answers."""

    def entry(q: dict) -> dict:
        options = {letter: q["op" + letter.lower()] for letter in "ABCD"}
        return {"question": q["question"], "options": options, "answer": "ABCD"[q["cop"] - 1], "gold": q["gold"]}

    return {
        "medmcqa": {q["id"]: entry(q) for q in items},
        "mmlu": {q["id"].replace("mm-", "mmlu-"): entry(q) for q in items if q["choice_type"] == "single"},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("datasets/medical-mini"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write(args.out, args.seed)


if __name__ == "__main__":
    main()
