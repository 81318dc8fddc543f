"""KGRAG-Ex's options, and the ``authors`` preset that sets each of them as the authors' code does.

The defaults follow paper 001 where it is explicit and the authors' code where it is silent
(docs/papers/p001.md names each choice, and what no preset changes: provbench's prompt wording, the
letter-constrained answer, the embedding model). ``preset: authors`` sets every option to what the
authors' experiments notebook does; an option the suite also gives wins over the preset:

- ``query: pairs``: the model lists entity pairs from the question (options not shown);
- ``grounding: exact``, ``case_sensitive: true``: a pair's entity is an entity of exactly that
  name (as ``nx.shortest_path`` on names), nothing nearer; ``named_fallback: false``: no entities
  are added from the question's text; ``max_triplets: null``: no cap on the model's pairs;
- ``directed: true``, ``max_paths: null``, ``path_order: pairs``: one directed shortest path per
  pair, all kept, in the model's pair order;
- ``path_format: chain``: a path reads "a->[R]->b->[S]->c";
- ``top_k: 0``: the answer comes from the pseudo-paragraphs alone (no chunk retrieval).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from provbench.kb.view import MAX_PATH_HOPS
from provbench_plugins.kb_builders.common.options import with_preset

AUTHORS = {
    "query": "pairs",
    "grounding": "exact",
    "case_sensitive": True,
    "named_fallback": False,
    "max_triplets": None,
    "directed": True,
    "max_paths": None,
    "path_order": "pairs",
    "path_format": "chain",
    "top_k": 0,
}


class KGRAGExOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    preset: Literal["paper", "authors"] = Field("paper", description="'authors': every option as the authors' code")
    query: Literal["triplets", "pairs"] = Field(
        "triplets", description="the query as (subject, relation, object) triplets (paper) or entity pairs (authors)"
    )
    endpoints: Literal["question", "options"] = Field(
        "question",
        description="paths join the query's entities (paper), or question entities to option "
        "entities ('options', a provbench variant)",
    )
    grounding: Literal["similarity", "exact"] = Field(
        "similarity", description="exact name, else the nearest entity by embedding ('similarity'); 'exact' only"
    )
    case_sensitive: bool = Field(False, description="an exact name must match case too (the authors')")
    min_match: float = Field(0.8, ge=0.0, le=1.0, description="least cosine score to ground by similarity")
    lexical: bool = Field(True, description="grounding by similarity also needs a word in common")
    named_fallback: bool = Field(True, description="add entities the question names verbatim")
    max_triplets: int | None = Field(
        4, ge=1, le=50, description="triplets or pairs the query parse may return (null: no cap, the authors')"
    )
    max_hops: int = Field(
        MAX_PATH_HOPS,
        ge=1,
        le=MAX_PATH_HOPS,
        description="longest path searched (default: the view's most, the paper sets none)",
    )
    max_paths: int | None = Field(
        3, ge=1, le=50, description="paths kept: one per pair, the shortest first (null: every pair's)"
    )
    path_order: Literal["covering", "pairs"] = Field(
        "covering",
        description="'covering': drop paths lying on another, keep those covering the most grounded "
        "entities not yet covered (provbench); 'pairs': every pair's path in the model's "
        "order (the authors)",
    )
    directed: bool = Field(False, description="follow edges only in their direction (the authors' nx.DiGraph)")
    path_format: Literal["lines", "chain"] = Field("lines", description="triplet lines (Tables 1-2) or one chain")
    paragraphs: Literal["llm", "template"] = "llm"
    unknown_instruction: bool = Field(False, description="tell the paragraph writer not to guess a '__'")
    top_k: int = Field(3, ge=0, le=50, description="chunks retrieved with the pseudo-document")
    text_chars: int = Field(600, ge=50)
    max_tokens: int = Field(256, ge=16)
    temperature: float = Field(0.0, ge=0.0, le=2.0)

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        return with_preset(data, {"authors": AUTHORS})
