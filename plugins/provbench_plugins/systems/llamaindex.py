"""The ``llamaindex`` system: a user's LlamaIndex pipeline, unchanged, evaluated like any system.

The suite names a factory, ``module:function``. For each unit the system builds a
``PropertyGraphIndex`` over that unit's view (:func:`provbench.integrations.llamaindex.property_graph_index`:
under an intervention, the pipeline sees only what the intervention left), and calls the factory
with it: ``factory(index, llm, **factory_options)`` (``llm`` only if it takes a second argument;
``embed_model=`` too if it has that parameter). ``llm`` is provbench's LLM client as a LlamaIndex
LLM, so every call is cached, counted and recorded on the unit's trace. The factory returns a
query engine or a retriever.

Answers (option ``answer``)
    ``response``     the query engine's response; its source nodes are the citations
    ``answer-step``  provbench asks the model once, from the retrieved nodes (each shown with its
                     id), and keeps the citations of nodes it was shown
    ``auto``         ``response`` for a query engine, ``answer-step`` for a retriever
A cited node cites its text unit, the relations of its triplet lines and their entities.

The trace comes from LlamaIndex's instrumentation events (:mod:`provbench.integrations.llamaindex.capture`):
retrieval steps, retrieved relations and text units with scores, and as visited / read what
reached the model. A pipeline that raises, or whose LLM call fails, gives a failed trace that
keeps what was recorded up to then. An empty response ("Empty Response": nothing retrieved) is
an abstention. With the ``otel`` extra installed, OpenInference's spans of the run, with the times
they really ran, are kept as ``artifacts["live_spans"]`` for ``provbench traces``
(:mod:`provbench.integrations.llamaindex.live_spans`; option ``live_spans: false`` keeps none).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, Literal

from pydantic import Field, field_validator

from provbench.agents import OneShotOptions, OneShotSystem, choices_text, clip, fixed_parts
from provbench.model import Citations, Question, Trace
from provbench.plugin_api import Environment

DEFAULT_CONTEXT_WINDOW = 3900  # LlamaIndex's own default for a model it does not know
EMPTY_RESPONSE = "Empty Response"  # what LlamaIndex's synthesizers answer when no node was retrieved
ANSWER_SYSTEM = (
    "You answer a question using only the context a retrieval pipeline found for it. Reply with a JSON "
    'object: "answer" (a short answer, or "" when the context does not say), "cited_textunits" and '
    '"cited_relationships" (the bracketed ids of the context items your answer rests on).'
)
ANSWER_USER = "Context:\n{context}\n\nQuestion: {question}"


def resolve_factory(spec: str) -> Callable[..., Any]:
    """The callable ``module:attribute`` (the attribute may be dotted) names; a ValueError says why not."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise ValueError(f"{spec!r} is not of the form 'module:function'")
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is the user's to see
        raise ValueError(f"cannot import module {module_name!r}: {type(exc).__name__}: {exc}") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"module {module_name!r} has no {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"{spec!r} is a {type(target).__name__}, not a callable")
    positional = [
        p
        for p in inspect.signature(target).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    if not positional:
        raise ValueError(f"{spec!r} must take the index as its first argument")
    return target


def call_factory(factory: Callable[..., Any], index: Any, llm: Any, embed_model: Any, options: dict[str, Any]) -> Any:
    """``factory(index[, llm], [embed_model=...], **options)``, by what its signature takes."""
    params = inspect.signature(factory).parameters
    positional = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params.values())
    kwargs = dict(options)
    if "embed_model" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        kwargs.setdefault("embed_model", embed_model)
    takes_llm = varargs or (len(positional) > 1 and positional[1].name not in kwargs)
    return factory(index, llm, **kwargs) if takes_llm else factory(index, **kwargs)


class LlamaIndexOptions(OneShotOptions):
    factory: str = Field(description="module:function building a query engine or retriever from (index, llm)")
    factory_options: dict[str, Any] = Field(default_factory=dict, description="keyword arguments for the factory")
    answer: Literal["auto", "response", "answer-step"] = Field(
        "auto", description="the query engine's response, or a provbench answer step over the retrieved nodes"
    )
    max_nodes: int = Field(20, ge=1, le=200, description="answer step: retrieved nodes put in the prompt")
    text_chars: int = Field(1500, ge=50, description="answer step: characters of each node shown")
    context_window: int = Field(
        DEFAULT_CONTEXT_WINDOW,
        ge=256,
        description="the model's context window in tokens: LlamaIndex splits a longer context over several prompts",
    )
    live_spans: bool = Field(
        True,
        description="keep OpenInference's live spans of the pipeline, with real "
        "times, for `provbench traces` (when the otel extra is installed)",
    )

    @field_validator("factory")
    @classmethod
    def _importable(cls, value: str) -> str:
        resolve_factory(value)
        return value


class LlamaIndexSystem(OneShotSystem):
    """A LlamaIndex pipeline from a user factory (``module:function``), run on each unit's view."""

    name = "llamaindex"
    Options = LlamaIndexOptions
    citation_keys = ("cited_textunits", "cited_relationships")

    @property
    def expected_llm_calls(self) -> float:
        return 2.0  # a synonym expansion and a synthesis, typically

    def instructions(self) -> list[str]:
        """Provbench's own answer prompt; the pipeline's own prompts are its factory's (not known here)."""
        return [*super().instructions(), ANSWER_SYSTEM, *fixed_parts(ANSWER_USER)]

    def run(self, question: Question, env: Environment) -> Trace:
        from provbench.integrations.llamaindex.live_spans import live_spans

        trace = self.new_trace(question)
        if not self.options.live_spans:
            return self.run_pipeline(question, env, trace)
        with live_spans(trace):
            return self.run_pipeline(question, env, trace)

    def run_pipeline(self, question: Question, env: Environment, trace: Trace) -> Trace:
        from provbench.integrations.llamaindex import (
            capture_trace,
            llamaindex_embedding,
            llamaindex_llm,
            property_graph_index,
        )

        opts = self.options
        llm = llamaindex_llm(
            env.llm,
            max_tokens=opts.max_tokens,
            temperature=opts.temperature,
            seed=env.seed,
            context_window=opts.context_window,
        )
        shown: list[tuple[str, Any]] = []
        with capture_trace(trace) as capture:
            try:
                embed_model = llamaindex_embedding()
                pipeline = call_factory(
                    resolve_factory(opts.factory),
                    property_graph_index(env.view, llm, embed_model),
                    llm,
                    embed_model,
                    opts.factory_options,
                )
                if self.mode(pipeline) == "response":
                    self.answer_from_response(pipeline.query(pipeline_query(question)), trace, capture)
                    return trace
                shown = self.shown_nodes(pipeline, question, capture)
            except Exception as exc:  # noqa: BLE001 - a pipeline's failure is recorded, not raised
                fail(trace, exc)
                return trace
        return self.answer_step(question, env, trace, capture, shown)

    def mode(self, pipeline: Any) -> str:
        engine, retriever = callable(getattr(pipeline, "query", None)), callable(getattr(pipeline, "retrieve", None))
        if not (engine or retriever):
            raise TypeError(
                f"the factory returned a {type(pipeline).__name__}: expected a LlamaIndex query engine "
                "(with .query) or retriever (with .retrieve)"
            )
        if self.options.answer == "auto":
            return "response" if engine else "answer-step"
        if self.options.answer == "response" and not engine:
            raise TypeError(f"answer 'response' needs a query engine; the factory returned a {type(pipeline).__name__}")
        if self.options.answer == "answer-step" and not retriever:
            raise TypeError(f"answer 'answer-step' needs .retrieve(); {type(pipeline).__name__} has none")
        return self.options.answer

    # -- the query engine's answer ----------------------------------------------------------------

    def answer_from_response(self, response: Any, trace: Trace, capture: Any) -> None:
        if callable(getattr(response, "get_response", None)):  # a streaming response
            response = response.get_response()
        text = response.response if isinstance(response.response, str) else str(response.response or "")
        sources = list(getattr(response, "source_nodes", None) or [])
        evidence = capture.evidence(sources)
        trace.citations = Citations(
            entities=evidence.entities, relationships=evidence.relations, text_units=evidence.text_units
        )
        trace.add_step(
            "generation",
            tool="llamaindex:query",
            result={"answer": text, "source_nodes": len(sources), "citations": trace.citations.model_dump()},
        )
        self.finish_answer(trace, "" if text.strip() == EMPTY_RESPONSE else text)

    # -- provbench's answer step ----------------------------------------------------------------------

    def shown_nodes(self, pipeline: Any, question: Question, capture: Any) -> list[tuple[str, Any]]:
        """The retrieved nodes the prompt will show, each labelled with its id: its text unit, else
        its relation, else ``node:<n>`` (a node from outside the knowledge base cites nothing in it)."""
        shown: dict[str, Any] = {}
        for n, node in enumerate(pipeline.retrieve(pipeline_query(question))[: self.options.max_nodes]):
            evidence = capture.evidence([node])
            label = (evidence.text_units or evidence.relations or [f"node:{n}"])[0]
            shown.setdefault(label, node)  # a second node of one text unit repeats its text: the first is shown
        capture.mark_reached(shown.values())
        return list(shown.items())

    def answer_step(
        self, question: Question, env: Environment, trace: Trace, capture: Any, shown: list[tuple[str, Any]]
    ) -> Trace:
        if not shown:
            trace.add_step("generation", tool="answer", result={"answer": None, "reason": "nothing retrieved"})
            self.finish_answer(trace, "")
            return trace
        context = "\n\n".join(
            f"[{label}] {clip(node.node.get_content(), self.options.text_chars)}" for label, node in shown
        )
        messages = [
            {"role": "system", "content": ANSWER_SYSTEM},
            {"role": "user", "content": ANSWER_USER.format(context=context, question=pipeline_query(question))},
        ]
        ids = {label for label, _ in shown}
        trace = self.generate(env, trace, messages, shown={"text_units": ids, "relationships": ids})
        cited = [
            node for label, node in shown if label in {*trace.citations.text_units, *trace.citations.relationships}
        ]
        evidence = capture.evidence(cited)
        trace.citations = Citations(
            entities=evidence.entities, relationships=evidence.relations, text_units=evidence.text_units
        )
        return trace


def pipeline_query(question: Question) -> str:
    """What the pipeline is asked: the question, and its options when it has them."""
    return question.question + (f"\nOptions: {choices_text(question)}" if question.choices else "")


def fail(trace: Trace, exc: Exception) -> None:
    from provbench.llm import LLMError

    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, LLMError):
        cause = cause.__cause__ or cause.__context__
    what = (
        f"LLM call failed: {cause}"
        if cause is not None
        else f"the LlamaIndex pipeline raised {type(exc).__name__}: {exc}"
    )
    trace.add_step("error", tool="llamaindex", error=what[:2000])
    trace.outcome, trace.error = "failed", what[:2000]
