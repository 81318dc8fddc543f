"""The control LLMs (provbench.controls): each reply fills the schema a built-in system asks for
(checked with jsonschema), is right exactly when the prompt holds the gold evidence (the oracle),
and shows its planted behaviour. Prompts are built with each paper's own templates."""

from __future__ import annotations

import json

import jsonschema
import pytest

from provbench.agents import answer_schema
from provbench.controls import BEHAVIOURS, make_control
from provbench.gold import GoldEvidence, GoldSentence, GoldTriple
from provbench.llm import LLMClient, make_llm
from provbench.model import Question
from provbench_plugins.kb_builders.fever.triples import triple_messages, triple_schema
from provbench_plugins.papers.p000_neighborhoods import prompts as P0
from provbench_plugins.papers.p001_kgrag_ex import prompts as P1
from provbench_plugins.papers.p002_planning import prompts as P2
from provbench_plugins.papers.p003_ga_rag import prompts as P3

FILM = GoldSentence(document="Glass Harbor (film)", index=1, text="The film was directed by Orin Vale.")
MOTHER = GoldSentence(document="Orin Vale", index=1, text="He is the son of the painter Mira Vale.")
Q = Question(
    id="q1",
    question="Who is the mother of the director of film Glass Harbor?",
    answer="Mira Vale",
    gold=GoldEvidence(
        sentences=[FILM, MOTHER],
        triples=[
            GoldTriple(subject="Glass Harbor", relation="director", object="Orin Vale"),
            GoldTriple(subject="Orin Vale", relation="mother", object="Mira Vale"),
        ],
        entities=["Glass Harbor", "Orin Vale", "Mira Vale"],
    ),
)
OTHER = Question(id="q2", question="Who directed Red Meadow?", answer="Lark Denholm")

GRAPH_CONTEXT = P0.GRAPHRAG_USER.format(
    question=P0.QUESTION.format(question=Q.question),
    context="\n\n".join(
        [
            "## Entities\n[ent:glass-harbor] Glass Harbor (FILM): a film\n[ent:orin-vale] Orin Vale (PERSON): a director\n"
            "[ent:mira-vale] Mira Vale (PERSON): a painter\n[ent:dunmere] Dunmere (PLACE): a town",
            "## Relationships\n[rel:1] Glass Harbor -[director]-> Orin Vale\n[rel:2] Orin Vale -[mother]-> Mira Vale",
            f"## Text units\n[tu:1] Glass Harbor is a 1987 drama film. {FILM.text}\n[tu:2] Orin Vale is a director. "
            f"{MOTHER.text}\n[tu:3] Dunmere is a port town.",
        ]
    ),
)
HALF_CONTEXT = GRAPH_CONTEXT.replace("[rel:2] Orin Vale -[mother]-> Mira Vale", "").replace(MOTHER.text, "")


def control(name: str, questions=(Q, OTHER)) -> LLMClient:
    llm = LLMClient(make_control(f"control:{name}"), max_attempts=1)
    llm.bind_questions(questions)
    return llm


def ask(llm: LLMClient, messages: list[dict], schema: dict | None):
    resp = llm.chat(messages, schema=schema)
    if schema is not None:
        jsonschema.validate(resp.data, schema)
        return resp.data
    return resp.text


def graphrag(name: str, context: str = GRAPH_CONTEXT, confidence: bool = True) -> dict:
    schema = answer_schema(
        "cited_entities", "cited_relationships", "cited_textunits", "cited_communities", confidence=confidence
    )
    return ask(
        control(name), [{"role": "system", "content": P0.GRAPHRAG_SYSTEM}, {"role": "user", "content": context}], schema
    )


def test_oracle_answers_exactly_when_the_prompt_holds_the_gold():
    full, half = graphrag("oracle"), graphrag("oracle", HALF_CONTEXT)
    assert (full["answer"], full["confidence"]) == ("Mira Vale", 0.95)
    assert full["cited_entities"] == ["ent:glass-harbor", "ent:orin-vale", "ent:mira-vale"]
    assert full["cited_relationships"] == ["rel:1", "rel:2"] and full["cited_textunits"] == ["tu:1", "tu:2"]
    assert (half["answer"], half["confidence"]) == ("unknown", 0.05)
    assert half["cited_relationships"] == ["rel:1"]  # it cites the gold it saw, no more


def test_planted_behaviours_on_the_same_prompt():
    uncited = graphrag("uses-uncited")
    assert uncited["answer"] == "Mira Vale"
    assert (uncited["cited_entities"], uncited["cited_relationships"], uncited["cited_textunits"]) == (
        ["ent:mira-vale"],
        ["rel:2"],
        ["tu:2"],
    )  # the chain's end only
    everything = graphrag("cites-everything")
    assert everything["answer"] == "Mira Vale" and "ent:dunmere" in everything["cited_entities"]
    assert everything["cited_textunits"] == ["tu:1", "tu:2", "tu:3"]
    parametric = graphrag("parametric", HALF_CONTEXT)
    assert parametric["answer"] == "Mira Vale" and not any(parametric[k] for k in ("cited_entities", "cited_textunits"))
    ignoring = [
        graphrag("ignores-context", c)["answer"] for c in (GRAPH_CONTEXT, HALF_CONTEXT, "Question: " + Q.question)
    ]
    assert len(set(ignoring)) == 1 and ignoring[0] in Q.question
    assert graphrag("random") == graphrag("random")  # deterministic, valid (ask() checks the schema)


def test_noise_sensitive_reader_drowns_in_distractors():
    """Issue 35 item 1c: the oracle, but evidence in its prompt is read with a chance that halves per
    32 concepts shown off the gold (a hash of the prompt draws), drowned it answers as without it;
    the oracle reads the same prompts every time."""

    def right_share(name: str, decoys: int, prompts: int = 120) -> float:
        right = 0
        for i in range(prompts):  # each prompt's decoys differ, so each draws again
            extra = "".join(f"\n[ent:decoy-{i}-{n}] Decoy {i} {n} (PLACE): a place" for n in range(decoys))
            reply = graphrag(name, GRAPH_CONTEXT.replace("a town", f"a town (draw {i}){extra}"))
            assert reply["answer"] == "Mira Vale" or (reply["answer"], reply["confidence"]) == ("unknown", 0.05)
            right += reply["answer"] == "Mira Vale"
        return right / prompts

    assert right_share("noise-sensitive", 0) >= 0.9  # Dunmere alone: chance 0.98
    assert 0.35 <= right_share("noise-sensitive", 31) <= 0.65  # 32 distractors: chance 0.5
    assert right_share("noise-sensitive", 127) <= 0.15  # 128: chance 0.06
    assert right_share("oracle", 127, prompts=20) == 1.0
    assert graphrag("noise-sensitive", HALF_CONTEXT)["answer"] == "unknown"  # no evidence, nothing to read


def test_a_prompt_about_no_bound_question_is_never_answered_right():
    assert (
        graphrag("oracle", GRAPH_CONTEXT.replace(Q.question, "Who is the mother of Orin Vale?"))["answer"] == "unknown"
    )
    unbound = LLMClient(make_control("control:oracle"), max_attempts=1)  # no bind_questions: no gold at all
    assert (
        unbound.chat([{"role": "user", "content": GRAPH_CONTEXT}], schema=answer_schema()).data["answer"] == "unknown"
    )


def test_config_names_behaviour_and_bound_questions():
    a, b = make_control("control:oracle"), make_control("control:oracle")
    a.bind_questions([Q])
    b.bind_questions([Q.model_copy(update={"answer": "Orin Vale"})])
    assert a.config()["behaviour"] == "oracle" and a.config() != b.config()  # other gold: other cache key
    with pytest.raises(Exception, match="unknown control LLM 'control:nope'"):
        make_control("control:nope")
    assert make_llm("control:parametric").model_id == "control:parametric"
    assert set(BEHAVIOURS) == {
        "oracle",
        "uses-uncited",
        "parametric",
        "cites-everything",
        "ignores-context",
        "random",
        "noise-sensitive",
    }


# -- paper 000's agent: one action per request, towards the gold -----------------------------------


def agent_turns(name: str, observations: list[str]) -> list[dict]:
    """The control's actions as an agent whose tool results are ``observations``, in order."""
    from provbench_plugins.papers.p000_neighborhoods.agentic import AgenticGraphRAG

    agent, llm = AgenticGraphRAG(), control(name)
    messages = [
        {"role": "system", "content": agent.system_prompt()},
        {"role": "user", "content": agent.question_text(Q)},
    ]
    actions = []
    for observation in [*observations, None]:
        action = ask(llm, messages, agent.action_schema())
        actions.append(action)
        if observation is None:
            break
        messages += [
            {"role": "assistant", "content": json.dumps(action)},
            {"role": "user", "content": f"Result of {action['tool']}:\n{observation}\n\nSteps left: 5."},
        ]
    return actions


SEARCH = "- ent:glass-harbor | Glass Harbor (score 0.91)\n- ent:red-meadow | Red Meadow (score 0.40)"
NEIGHBOURS_1 = (
    "neighbours of ent:glass-harbor (Glass Harbor):\n- rel:1: Glass Harbor -[director]-> Orin Vale [ent:orin-vale]"
)
NEIGHBOURS_2 = "neighbours of ent:orin-vale (Orin Vale):\n- rel:2: Orin Vale -[mother]-> Mira Vale [ent:mira-vale]"


def test_oracle_agent_follows_the_gold_and_submits_once_it_holds_it():
    actions = agent_turns("oracle", [SEARCH, NEIGHBOURS_1, NEIGHBOURS_2])
    assert [(a["tool"], a["arguments"].get("query") or a["arguments"].get("entity_id")) for a in actions[:3]] == [
        ("search_entities", "Glass Harbor"),
        ("get_neighbors", "ent:glass-harbor"),
        ("get_neighbors", "ent:orin-vale"),
    ]
    final = actions[3]["arguments"]
    assert actions[3]["tool"] == "submit_answer" and final["answer"] == "Mira Vale"
    assert final["cited_entities"] == ["ent:glass-harbor", "ent:orin-vale", "ent:mira-vale"]
    assert final["cited_relationships"] == ["rel:1", "rel:2"]


def test_agent_without_the_evidence_never_repeats_and_then_gives_up():
    nothing = "no entities found"
    actions = agent_turns("oracle", [nothing, nothing, nothing])
    calls = [(a["tool"], json.dumps(a["arguments"], sort_keys=True)) for a in actions]
    assert len(set(calls)) == len(calls) and actions[0]["tool"] == "search_entities"
    parametric = agent_turns("parametric", [])
    assert parametric[0]["tool"] == "submit_answer" and parametric[0]["arguments"]["answer"] == "Mira Vale"


def test_cites_everything_agent_cites_every_id_it_was_shown():
    # the agent's instructions write ids as 'ent:...': read as no id at all (it once raised IndexError)
    final = agent_turns("cites-everything", [SEARCH, NEIGHBOURS_1, NEIGHBOURS_2])[-1]
    assert final["tool"] == "submit_answer" and final["arguments"]["answer"] == "Mira Vale"
    assert set(final["arguments"]["cited_entities"]) >= {"ent:glass-harbor", "ent:red-meadow", "ent:mira-vale"}


# -- papers 001-003: their schemas and prompt shapes ----------------------------------------------


def test_p001_parse_paragraph_and_answer():
    medical = Question(
        id="m1",
        question="Does pulmonary hypoplasia in a newborn point to oligohydramnios or to rash?",
        answer="B",
        choices=["fever", "oligohydramnios", "rash", "cough"],
        gold=GoldEvidence(
            triples=[GoldTriple(subject="pulmonary hypoplasia", relation="INDICATES", object="oligohydramnios")],
            ordered=True,
            entities=["pulmonary hypoplasia", "oligohydramnios"],
        ),
    )
    llm = control("oracle", [medical])
    parse = ask(
        llm,
        [
            {"role": "system", "content": P1.TRIPLET_SYSTEM},
            {"role": "user", "content": P1.TRIPLET_USER.format(question=medical.question)},
        ],
        P1.triplet_schema(4),
    )
    assert parse["triplets"] == [
        {"subject": "pulmonary hypoplasia", "relation": "INDICATES", "object": "oligohydramnios"}
    ]
    pairs = ask(
        llm,
        [
            {"role": "system", "content": P1.PAIRS_SYSTEM},
            {"role": "user", "content": P1.PAIRS_USER.format(question=medical.question)},
        ],
        P1.pairs_schema(4),
    )
    assert pairs["pairs"] == [{"entity1": "pulmonary hypoplasia", "entity2": "oligohydramnios"}]
    deep = medical.model_copy(
        update={
            "id": "m2",
            "question": "What does pulmonary hypoplasia lead to, in the end?",
            "gold": GoldEvidence(
                triples=[
                    *medical.gold.triples,
                    GoldTriple(subject="oligohydramnios", relation="CAUSES", object="renal agenesis"),
                ],
                ordered=True,
                entities=["pulmonary hypoplasia", "oligohydramnios", "renal agenesis"],
            ),
        }
    )
    deep_llm = control("oracle", [deep])
    chain = ask(
        deep_llm, [{"role": "user", "content": P1.TRIPLET_USER.format(question=deep.question)}], P1.triplet_schema(4)
    )["triplets"]
    assert [t["object"] for t in chain] == ["oligohydramnios", "renal agenesis"]  # it looks up the gold chain
    pairs = ask(
        deep_llm, [{"role": "user", "content": P1.PAIRS_USER.format(question=deep.question)}], P1.pairs_schema(4)
    )["pairs"]
    assert [(p["entity1"], p["entity2"]) for p in pairs] == [
        ("pulmonary hypoplasia", "oligohydramnios"),
        ("oligohydramnios", "renal agenesis"),
    ]  # each triple once
    ignoring = ask(
        control("ignores-context", [deep]),
        [{"role": "user", "content": P1.TRIPLET_USER.format(question=deep.question)}],
        P1.triplet_schema(4),
    )["triplets"]
    assert ignoring == chain  # its parse reads the question, as the oracle's; only its answers ignore context
    chain = "pulmonary hypoplasia ->[INDICATES]-> oligohydramnios"
    paragraph = ask(llm, P1.paragraph_messages(chain, unknown_instruction=False), None)
    assert paragraph == "pulmonary hypoplasia indicates oligohydramnios."
    authors = ask(
        llm, P1.paragraph_messages("pulmonary hypoplasia->[INDICATES]->__->[CAUSES]->renal agenesis", False), None
    )
    assert authors == "pulmonary hypoplasia indicates __.\n__ causes renal agenesis."  # the authors' chain format
    blanked = ask(llm, P1.paragraph_messages(chain.replace("INDICATES", "__"), unknown_instruction=True), None)

    def answer(text: str) -> str:
        return ask(llm, P1.answer_messages(text, medical.question, medical.choices), P1.answer_schema(4))["answer"]

    assert answer(paragraph) == "B" and answer(blanked) != "B"


def test_p002_loop_reply_follows_gold_relations_and_gates_confidence():
    def reply(relations: str, vocab: list[str]) -> dict:
        user = P2.SYNTHESIZE_USER.format(
            question=Q.question,
            round=1,
            max_rounds=4,
            focus=Q.question,
            concepts="[ent:glass-harbor] Glass Harbor (FILM): a film",
            relations=relations,
            relation_types=", ".join(vocab),
        )
        return ask(
            control("oracle"),
            [{"role": "system", "content": P2.SYNTHESIZE_SYSTEM}, {"role": "user", "content": user}],
            P2.reply_schema(vocab),
        )

    early = reply("[rel:1] Glass Harbor -[director]-> Orin Vale", ["director", "mother", "spouse"])
    assert early["confidence"] < 0.8 and early["relation_types"] == ["director", "mother"]
    assert early["focus"] == "Mira Vale"  # the gold entity not yet in its evidence
    done = reply("[rel:1] Glass Harbor -[director]-> Orin Vale\n[rel:2] Orin Vale -[mother]-> Mira Vale", ["spouse"])
    assert (done["answer"], done["confidence"]) == ("Mira Vale", 0.95) and done["relation_types"] == []


def test_p003_extraction_then_label_from_fact_lines():
    claim = Question(
        id="c1",
        question="Orin Vale is the son of Mira Vale.",
        answer="SUPPORTS",
        choices=["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"],
        gold=GoldEvidence(sentences=[MOTHER], entities=["Orin Vale"]),
    )
    llm = control("oracle", [claim])
    passage = f"Orin Vale is a director. {MOTHER.text}"
    extracted = ask(llm, triple_messages(passage, 8), triple_schema(8))["triplets"]
    assert len(extracted) == 2 and {t["confidence"] for t in extracted} == {0.9}

    def label(lines: list[str]) -> dict:
        user = P3.USER.format(heading="Graph facts", lines="\n".join(lines), claim=claim.question, idk=P3.IDK_LINE)
        return ask(
            llm,
            [{"role": "system", "content": P3.SYSTEM}, {"role": "user", "content": user}],
            P3.answer_schema(len(lines), allow_idk=True),
        )

    facts = [
        P3.FACT_LINE.format(n=n, confidence=t["confidence"], **{k: t[k] for k in ("subject", "relation", "object")})
        for n, t in enumerate(extracted, 1)
    ]
    held = label(facts)
    assert held["label"] == "SUPPORTS" and held["cited"] == [2]
    assert label(facts[:1])["label"] == P3.IDK  # the gold fact is not shown: it abstains


def test_replies_are_cached_and_the_bound_gold_travels_to_worker_processes(tmp_path):
    import pickle

    llm = LLMClient(make_control("control:oracle"), cache_dir=tmp_path / "cache", max_attempts=1)
    llm.bind_questions([Q])
    messages = [{"role": "user", "content": GRAPH_CONTEXT}]
    first, again = llm.chat(messages, schema=answer_schema()), llm.chat(messages, schema=answer_schema())
    assert again.cached and again.text == first.text and first.data["answer"] == "Mira Vale"
    copy = pickle.loads(pickle.dumps(llm.backend))  # how the Ray executor ships a backend
    assert copy.question_in(messages) == Q and copy.config() == llm.backend.config()
