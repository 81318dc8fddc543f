"""LlamaIndex faces of provbench's LLM client and embedding model, and the index over a view.

* :class:`ProvbenchLLM` is a LlamaIndex ``LLM`` whose every call is one
  :meth:`provbench.llm.LLMClient.chat`: cached on disk, retried, counted, and recorded on the trace
  of the running unit (the capture's, see :mod:`.capture`, or the one given).
* :class:`ProvbenchEmbedding` is a LlamaIndex embedding over the model that embedded the knowledge
  base: query vectors are the ones the view searches with (cached, normalised), so scores match.
* :func:`property_graph_index` is a ``PropertyGraphIndex`` over a view store: nothing is inserted
  or re-embedded, and LlamaIndex's stock retrievers (``as_retriever()``, ``VectorContextRetriever``,
  ``LLMSynonymRetriever``, ``include_text=True``) work on it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Sequence

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.bridge.pydantic import BaseModel, Field, PrivateAttr
from llama_index.core.constants import DEFAULT_CONTEXT_WINDOW
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.llm import LLM

from ...kb.embeddings import EMBEDDING_MODEL_NAME, embed_query, embed_texts
from .capture import current_capture
from .graph_store import property_graph_store

if TYPE_CHECKING:
    from llama_index.core import PropertyGraphIndex

    from ...kb import GraphView
    from ...llm import LLMClient
    from ...model import Trace


class ProvbenchLLM(LLM):
    """A LlamaIndex LLM over a provbench :class:`~provbench.llm.LLMClient` (chat model, no streaming
    of its own: a stream yields the whole reply once). ``None`` settings take the client's defaults."""

    purpose: str = Field(default="llamaindex", description="recorded on each LLM call of the trace")
    max_tokens: int | None = Field(default=None, description="cap on each reply (None: the client's)")
    temperature: float | None = Field(default=None, description="None: the client's (a suite's wins)")
    seed: int | None = Field(default=None, description="passed to backends that take one")
    context_window: int = Field(default=DEFAULT_CONTEXT_WINDOW, description="what LlamaIndex fits prompts into")
    _client: Any = PrivateAttr()
    _trace: Any = PrivateAttr(default=None)

    def __init__(self, client: "LLMClient", *, trace: "Trace | None" = None, **settings: Any) -> None:
        super().__init__(**settings)
        self._client = client
        self._trace = trace

    @classmethod
    def class_name(cls) -> str:
        return "provbench_llm"

    @property
    def client(self) -> "LLMClient":
        return self._client

    @property
    def metadata(self) -> LLMMetadata:
        num_output = self.max_tokens or self._client.default_params.get("max_tokens") or 512
        return LLMMetadata(
            context_window=self.context_window,
            num_output=num_output,
            is_chat_model=True,
            model_name=self._client.model_id,
        )

    def ask(self, messages: list[dict[str, str]], schema: dict[str, Any] | None = None) -> Any:
        """One call through the client, recorded on the given trace or the running unit's: the
        reply's text, or with a JSON ``schema`` the client's whole reply (``.data`` parsed)."""
        capture = current_capture()
        trace = self._trace if self._trace is not None else (capture.trace if capture is not None else None)
        if capture is not None:
            capture.count_provbench_call()
        reply = self._client.chat(
            messages,
            schema=schema,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
            purpose=self.purpose,
            trace=trace,
        )
        return reply if schema is not None else reply.text

    # LlamaIndex's default structured_predict puts format instructions into a plain prompt and parses
    # the text; passing the pydantic schema instead gives llama.cpp its grammar, a hosted model its
    # response format and schema-following its instance (SchemaLLMPathExtractor and the like use it).
    def structured_predict(
        self, output_cls: type[BaseModel], prompt: Any, llm_kwargs: dict[str, Any] | None = None, **prompt_args: Any
    ) -> BaseModel:
        messages = as_dicts(prompt.format_messages(llm=self, **prompt_args))
        return _validated(output_cls, self.ask(messages, schema=pydantic_schema(output_cls)))

    async def astructured_predict(
        self, output_cls: type[BaseModel], prompt: Any, llm_kwargs: dict[str, Any] | None = None, **prompt_args: Any
    ) -> BaseModel:
        messages = as_dicts(prompt.format_messages(llm=self, **prompt_args))
        reply = await asyncio.to_thread(self.ask, messages, pydantic_schema(output_cls))  # keeps the context
        return _validated(output_cls, reply)

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return _chat_response(self.ask(as_dicts(messages)))

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.ask([{"role": "user", "content": prompt}]))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        text = self.ask(as_dicts(messages))

        def once() -> ChatResponseGen:  # LlamaIndex's callbacks want a generator
            yield _chat_response(text, delta=text)

        return once()

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        text = self.ask([{"role": "user", "content": prompt}])

        def once() -> CompletionResponseGen:
            yield CompletionResponse(text=text, delta=text)

        return once()

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return _chat_response(await asyncio.to_thread(self.ask, as_dicts(messages)))  # to_thread keeps the context

    @llm_completion_callback()
    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=await asyncio.to_thread(self.ask, [{"role": "user", "content": prompt}]))

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseAsyncGen:
        text = await asyncio.to_thread(self.ask, as_dicts(messages))

        async def once() -> ChatResponseAsyncGen:
            yield _chat_response(text, delta=text)

        return once()

    @llm_completion_callback()
    async def astream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseAsyncGen:
        text = await asyncio.to_thread(self.ask, [{"role": "user", "content": prompt}])

        async def once() -> CompletionResponseAsyncGen:
            yield CompletionResponse(text=text, delta=text)

        return once()


def pydantic_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema with its ``$defs`` inlined (the client's backends take plain schemas)."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any, depth: int = 0) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/") and depth < 32:
                return inline(
                    {**definitions[ref.rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}, depth + 1
                )
            return {k: inline(v, depth) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v, depth) for v in node]
        return node

    return inline(schema)


def _validated(output_cls: type[BaseModel], reply: Any) -> BaseModel:
    """The reply as ``output_cls``; a ValueError (what LlamaIndex's callers catch) when it is not one."""
    if reply.data is None:
        raise ValueError(f"the reply is not JSON of the {output_cls.__name__} schema: {reply.text[:200]!r}")
    return output_cls.model_validate(reply.data)


def as_dicts(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """LlamaIndex chat messages as provbench's ``{role, content}`` dicts (text blocks only)."""
    return [{"role": getattr(m.role, "value", str(m.role)), "content": m.content or ""} for m in messages]


def _chat_response(text: str, delta: str | None = None) -> ChatResponse:
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta=delta)


class ProvbenchEmbedding(BaseEmbedding):
    """The knowledge base's embedding model as a LlamaIndex embedding (normalised vectors; query
    vectors cached, as the view's own searches are)."""

    model_name: str = Field(default=EMBEDDING_MODEL_NAME)

    @classmethod
    def class_name(cls) -> str:
        return "provbench_embedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        return embed_query(query).tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return embed_texts([text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return embed_texts(texts).tolist()


def llamaindex_llm(client: "LLMClient", **settings: Any) -> ProvbenchLLM:
    """``client`` as a LlamaIndex LLM (``settings``: purpose, max_tokens, temperature, seed,
    context_window, trace)."""
    return ProvbenchLLM(client, **settings)


def llamaindex_embedding() -> ProvbenchEmbedding:
    """The knowledge base's embedding model as a LlamaIndex embedding."""
    return ProvbenchEmbedding()


def property_graph_index(view: "GraphView", llm: Any = None, embed_model: Any = None) -> "PropertyGraphIndex":
    """A LlamaIndex ``PropertyGraphIndex`` that reads ``view`` through a view store.

    ``llm``: a LlamaIndex LLM or a provbench ``LLMClient`` (wrapped in :class:`ProvbenchLLM`); the
    index's retrievers use it (None: LlamaIndex's ``Settings.llm``, as for any index).
    ``embed_model``: what embeds queries (default :class:`ProvbenchEmbedding`, the model of the
    knowledge base's vectors; another model's vectors would not match them).
    """
    from llama_index.core import PropertyGraphIndex
    from llama_index.core.indices.property_graph import ImplicitPathExtractor

    from ...llm import LLMClient

    if isinstance(llm, LLMClient):
        llm = llamaindex_llm(llm)
    # a non-empty extractor list keeps LlamaIndex from building its LLM extractor (nothing is inserted)
    return PropertyGraphIndex.from_existing(
        property_graph_store=property_graph_store(view),
        llm=llm,
        embed_model=embed_model or llamaindex_embedding(),
        kg_extractors=[ImplicitPathExtractor()],
        embed_kg_nodes=True,
    )
