"""The control judge: ragas' judge prompts answered by rule, so a ragas score measures the metric's
pipeline (ragas' own prompts, parsing and arithmetic), not a model.

Each ragas 0.4.3 prompt ends with its input as JSON (``input: {...}``) and the request carries the
reply's JSON schema; the pair (the schema's properties, the input's keys) says which prompt it is
(:data:`RULES`; any other request is not judged), and the judge answers:

* **statements** (``Faithfulness``): each sentence of the answer (four words or more, ending in
  ``.``, ``!`` or ``?``) is a statement as it stands; anything else, such as a bare answer phrase
  (``Dratrer Avobury``), is stated as the answer to the question:
  ``The answer to "<question>" is <phrase>.``
* **verdicts** (``Faithfulness``, ``FactualCorrectness``): a statement is supported (1) when each
  of its terms appears in the context (whole words, case ignored), else not (0), with the missing
  terms as the reason. Terms are names (runs of capitalised words, a leading function word
  dropped: ``Glass Harbor``), numbers and other content words (three letters or more, not a
  function word). Of the question quoted in an answer statement only the names and numbers count:
  the rule cannot infer "paternal grandfather" from a "daughter of" and a "son of" sentence, so
  the wording of the question's relation is not checked; the entities it names and the answer
  are. Against a ``Question: ... Answer: ...`` context the statement's terms are looked for in
  its answer part (the question states nothing); a phrase of function words only (``Who``) is its
  own term.
* **claims** (``FactualCorrectness``): a ``Question: Q Answer: A`` text gives the statements of A
  for Q (above); any other text, each of its sentences.
* **usefulness** (``ContextPrecisionWithReference``, one read item): useful (1) when the item names
  the reference answer (each of its terms) or an entity the question names.
* **attribution** (``ContextRecall``): each claim of the reference is attributed (1) when the
  context names each of its names and numbers (its content words only when it has none), since a
  graph states "He married Koka Povale." as a relation type.
* **entities** (``ContextEntityRecall``): the names and numbers of the text, a possessive ``'s``
  dropped; ragas intersects the reference's and the contexts' lists as exact strings.

The rules are lenient where a model is strict (terms may come from different passages; a relation
is never checked) and strict where a model is lenient (a paraphrase with other words is not
supported; ``Orin Vale Jr`` is not ``Orin Vale``). docs/metric-validity.md says what this means for
the figures it gives.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+")
TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+|[^\w\s]")  # punctuation ends a name
ANSWER_STATEMENT = re.compile(r'^The answer to "(.*)" is (.*?)\.?$', re.S)
FRAMED = re.compile(r"^Question: (.*?) Answer: (.*)$", re.S)  # ragas_reference's reference answer
FUNCTION_WORDS = frozenset(
    """
a about after all also an and any are as at be been before being but by can could did do does
for from had has have he her hers him his how i if in into is it its may might more most no not
of on one or our over she should so some such than that the their them then there these they
this those through to under until up upon was we were what when where which while who whom whose
why will with would yes you your
""".split()
)


def judge_reply(messages: list[dict[str, Any]], schema: dict | None) -> dict[str, Any] | None:
    """The judge's reply to one of the ragas prompts in :data:`RULES`, or None when the request is
    none of them (its reply schema's properties and its input's keys say which it is)."""
    asked = " ".join(sorted((schema or {}).get("properties", {})))
    data = ragas_input(messages)
    rule = RULES.get((asked, " ".join(sorted(data))))
    return None if rule is None else rule(data)


def ragas_input(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON after the prompt's last ``input:`` (ragas writes its input there)."""
    text = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") != "assistant")
    start = text.rfind("input: {")
    if start < 0:
        return {}
    try:
        data, _ = json.JSONDecoder().raw_decode(text, start + len("input: "))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def statements(question: str, answer: str) -> list[str]:
    """Each sentence of the answer as it stands; an answer phrase as the answer to the question."""
    found = []
    for sentence in SENTENCE_END.split(" ".join(answer.split())):
        if not sentence:
            continue
        if len(sentence.split()) >= 4 and sentence[-1] in ".!?":
            found.append(sentence)
        else:
            found.append(f'The answer to "{question.strip()}" is {sentence.rstrip(".")}.')
    return found


def verdict(statement: str, context: str, placed: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Supported (1) when each term (``placed``: with the text it must appear in; by default
    :func:`placed_terms`) appears, else 0 with the missing terms as the reason."""
    placed = placed_terms(statement, context) if placed is None else placed
    missing = [term for term, text in placed if not _held(term, text)]
    reason = (
        "Every term of the statement appears in the context."
        if not missing
        else "Not in the context: " + ", ".join(missing) + "."
    )
    return {"statement": statement, "reason": reason, "verdict": 0 if missing else 1}


def placed_terms(statement: str, context: str) -> list[tuple[str, str]]:
    """Each term the statement needs (module docstring) with the text it must appear in. Of a
    question-and-answer context only the answer states anything (the question names every entity
    it asks about), so the statement's terms are looked for there; the names of a question quoted
    in an answer statement, anywhere."""
    stated = answer_part(context)
    quoted = ANSWER_STATEMENT.match(statement)
    if not quoted:
        return [(term, stated) for term in content_terms(statement)]
    question, phrase = quoted.groups()
    placed = [(name, context) for name in names_and_numbers(question)]
    return list(dict.fromkeys([*placed, *((term, stated) for term in phrase_terms(phrase))]))


def phrase_terms(phrase: str) -> list[str]:
    """An answer phrase's content terms; a phrase of function words only ("Who", "yes") is its own term."""
    return content_terms(phrase) or ([phrase.strip(" .")] if phrase.strip(" .") else [])


def answer_part(text: str) -> str:
    """The answer of a ``Question: ... Answer: ...`` text, else the whole text."""
    framed = FRAMED.match(" ".join(text.split()))
    return framed.group(2) if framed else text


# -- the reference metrics' prompts (provbench_plugins.metrics.ragas_reference) -------------------


def claims(text: str) -> list[str]:
    """FactualCorrectness' claims: a ``Question: Q Answer: A`` text as :func:`statements` of A for Q;
    any other text, each of its sentences."""
    flat = " ".join(text.split())
    framed = FRAMED.match(flat)
    return statements(*framed.groups()) if framed else [s for s in SENTENCE_END.split(flat) if s]


def usefulness(question: str, item: str, reference: str) -> dict[str, Any]:
    """ContextPrecision's verdict on one read item: useful when it names the reference answer (every
    term of it) or an entity the question names."""
    answer = phrase_terms(answer_part(reference))
    if answer and all(_held(t, item) for t in answer):
        return {"reason": "The context names the answer.", "verdict": 1}
    named = [n for n in names_and_numbers(question) if _held(n, item)]
    if named:
        return {"reason": "The context names " + ", ".join(named) + " of the question.", "verdict": 1}
    return {"reason": "The context names neither the answer nor the question's entities.", "verdict": 0}


def attributions(context: str, reference: str) -> list[dict[str, Any]]:
    """ContextRecall's classification of each claim of the reference: attributed when the context
    names each of its names and numbers (its other words only when it has none: a graph states
    "He married Koka Povale." as a relation type, ``SPOUSE``); an answer statement by the verdict rule."""
    judged = []
    for claim in claims(reference):
        needed = None if ANSWER_STATEMENT.match(claim) else names_and_numbers(claim) or content_terms(claim)
        judged.append(verdict(claim, context, None if needed is None else [(t, context) for t in needed]))
    return [{"statement": v["statement"], "reason": v["reason"], "attributed": v["verdict"]} for v in judged]


def entities(text: str) -> list[str]:
    """ContextEntityRecall's entities: the names and numbers of the text, a possessive ``'s`` dropped."""
    return list(dict.fromkeys(re.sub(r"'s\b", "", e) for e in names_and_numbers(text)))


def content_terms(text: str) -> list[str]:
    """Names, numbers and other content words, in order of appearance."""
    found = names_and_numbers(text)
    named = {w.casefold() for name in found for w in name.split()}
    for word in WORD.findall(text):
        folded = word.casefold()
        if word[0].islower() and len(word) >= 3 and folded not in FUNCTION_WORDS and folded not in named:
            found.append(folded)
    return list(dict.fromkeys(found))


def names_and_numbers(text: str) -> list[str]:
    """Runs of capitalised words (without a leading function word) and numbers."""
    found: list[str] = []
    run: list[str] = []
    for word in [*TOKEN.findall(text), ""]:
        if word[:1].isupper():
            run.append(word)
            continue
        while run and run[0].casefold() in FUNCTION_WORDS:
            run.pop(0)
        if run:
            found.append(" ".join(run))
        run = []
        if word.isdigit():
            found.append(word)
    return list(dict.fromkeys(found))


def _held(term: str, context: str) -> bool:
    words = r"\W+".join(map(re.escape, term.split()))
    return re.search(rf"(?<![\w]){words}(?![\w])", context, re.I) is not None


# (the reply schema's properties, the ragas input's keys) -> the reply by rule
RULES: dict[tuple[str, str], Callable[[dict[str, Any]], dict[str, Any]]] = {
    ("statements", "answer question"): lambda d: {"statements": statements(str(d["question"]), str(d["answer"]))},
    ("statements", "context statements"): lambda d: {
        "statements": [verdict(str(s), str(d["context"])) for s in d["statements"]]
    },
    ("claims", "atomicity coverage response"): lambda d: {"claims": claims(str(d["response"]))},
    ("reason verdict", "answer context question"): lambda d: usefulness(
        str(d["question"]), str(d["context"]), str(d["answer"])
    ),
    ("classifications", "answer context question"): lambda d: {
        "classifications": attributions(str(d["context"]), str(d["answer"]))
    },
    ("entities", "text"): lambda d: {"entities": entities(str(d["text"]))},
}
