"""The control judge: ragas' faithfulness prompts answered by rule, so a faithfulness score
measures the metric's pipeline (ragas' own prompts, parsing and arithmetic), not a model.

``ragas.metrics.collections.Faithfulness`` (ragas 0.4.3) asks twice: statements from an answer,
then a verdict for each statement against the retrieved contexts. Each prompt ends with its input
as JSON (``input: {...}``) and the request carries the reply's JSON schema; the judge reads both
and answers:

* **statements**: each sentence of the answer (four words or more, ending in ``.``, ``!`` or
  ``?``) is a statement as it stands; anything else, such as a bare answer phrase
  (``Dratrer Avobury``), is stated as the answer to the question:
  ``The answer to "<question>" is <phrase>.``
* **verdicts**: a statement is supported (1) when each of its terms appears in the context
  (whole words, case ignored), else not (0), with the missing terms as the reason. Terms are
  names (runs of capitalised words, a leading function word dropped: ``Glass Harbor``), numbers
  and other content words (three letters or more, not a function word). Of the question quoted
  in an answer statement only the names and numbers count: the rule cannot infer "paternal
  grandfather" from a "daughter of" and a "son of" sentence, so the wording of the question's
  relation is not checked; the entities it names and the answer are.

The rule is lenient where a model is strict (terms may come from different passages; a relation
is never checked), and strict where a model is lenient (a paraphrase with other words is not
supported). docs/metric-validity.md says what this means for the figures it gives.
"""

from __future__ import annotations

import json
import re
from typing import Any

SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+")
TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+|[^\w\s]")  # punctuation ends a name
ANSWER_STATEMENT = re.compile(r'^The answer to "(.*)" is (.*?)\.?$', re.S)
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
    """The judge's reply to a ragas faithfulness request, or None when the request is not one."""
    asked = _asked(schema)
    if asked is None:
        return None
    data = ragas_input(messages)
    if asked == "statements":
        return {"statements": statements(str(data.get("question", "")), str(data.get("answer", "")))}
    context = str(data.get("context", ""))
    return {"statements": [verdict(str(s), context) for s in data.get("statements", [])]}


def _asked(schema: dict | None) -> str | None:
    """ "statements" (a list of strings), "verdicts" (objects with a verdict), or None."""
    props = (schema or {}).get("properties", {})
    if set(props) != {"statements"}:
        return None
    item = props["statements"].get("items", {})
    if item.get("type") == "string":
        return "statements"
    return "verdicts" if "verdict" in item.get("properties", {}) else None


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


def verdict(statement: str, context: str) -> dict[str, Any]:
    missing = [t for t in terms(statement) if not _held(t, context)]
    reason = (
        "Every term of the statement appears in the context."
        if not missing
        else "Not in the context: " + ", ".join(missing) + "."
    )
    return {"statement": statement, "reason": reason, "verdict": 0 if missing else 1}


def terms(statement: str) -> list[str]:
    """What must appear in the context for the statement to be supported (module docstring)."""
    quoted = ANSWER_STATEMENT.match(statement)
    if quoted:
        question, phrase = quoted.groups()
        return list(dict.fromkeys([*names_and_numbers(question), *content_terms(phrase)]))
    return content_terms(statement)


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
