"""Options builders share (a suite's ``kb.options``).

:class:`BaseBuildOptions` holds what every builder takes (``overwrite``, ``max_workers``,
``ann_min_vectors``: none of them changes the knowledge base). A builder that chunks, extracts
and summarises with the blocks subclasses :class:`CommonBuildOptions`, adds its own fields, and
passes ``extraction_settings()`` / ``community_settings()`` / ``summary_settings()`` to the
blocks; one that reads a ready graph (FEVER pages, medical triples, concept files) subclasses
:class:`BaseBuildOptions`. Every field changes the knowledge base except those in :data:`RUNTIME_FIELDS`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from provbench.kb.health import DEFAULT_MAX_FAILED_EXTRACTION_SHARE

from .communities import CommunitySettings, SummarySettings
from .extraction import ExtractionSettings

#: options that do not change the knowledge base (left out of its fingerprint)
RUNTIME_FIELDS = {
    "max_workers",
    "overwrite",
    "ann_min_vectors",
    "max_failed_extraction_share",
    "allow_unlinked_entities",
}


class BaseBuildOptions(BaseModel):
    """What every builder takes; none of it changes the knowledge base."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_workers: int | None = Field(
        None,
        ge=1,
        le=256,
        description="concurrent LLM calls (default: the LLM client's concurrency)",
    )
    overwrite: bool = Field(False, description="replace a finished KB built from other inputs")
    ann_min_vectors: int | None = Field(
        None,
        ge=1,
        description="vector indices this large also get an HNSW index (default 20,000)",
    )
    max_failed_extraction_share: float = Field(
        DEFAULT_MAX_FAILED_EXTRACTION_SHARE,
        ge=0,
        le=1,
        description="a KB whose LLM extraction failed on a larger "
        "share of the text units it was tried on is degenerate: runs refuse it (provbench.kb.health)",
    )
    allow_unlinked_entities: bool = Field(
        False,
        description="a KB none of whose entities is linked to a text unit is degenerate unless this is true: "
        "for an evaluation that never reads entity text (paper 001's KG paths over triples with file-level provenance)",
    )

    def fingerprint_fields(self) -> dict[str, Any]:
        return self.model_dump(exclude=RUNTIME_FIELDS)


class CommonBuildOptions(BaseBuildOptions):
    """The options of a builder on the chunking, extraction and community blocks."""

    # text units
    chunk_size: int = Field(200, ge=8, le=8192, description="text-unit budget in tokens (SentenceSplitter)")
    chunk_overlap: int = Field(0, ge=0, description="tokens shared by consecutive text units")
    # LLM extraction
    extract: bool = Field(True, description="enrich the graph with LLM extraction")
    max_extractions: int | None = Field(
        40,
        ge=0,
        description="text units sent to the LLM (those mentioning most known entities first); None = all",
    )
    max_entities_per_unit: int = Field(
        12,
        ge=1,
        le=100,
        description="entities the extraction schema allows per text unit (paper 000's KB has ~6)",
    )
    max_relations_per_unit: int = Field(
        10,
        ge=0,
        le=100,
        description="relations the extraction schema allows per text unit (paper 000's KB has ~5)",
    )
    extraction_max_tokens: int = Field(
        640,
        ge=16,
        le=8192,
        description="reply budget of one extraction (~25 tokens per entity or relation)",
    )
    # communities
    community_algorithm: Literal["hierarchical", "flat"] = Field(
        "hierarchical",
        description="hierarchical Leiden splits clusters above max_cluster_size one level down",
    )
    community_scope: Literal["largest-component", "all"] = Field(
        "largest-component",
        description="cluster the largest connected component only (as GraphRAG), or every component",
    )
    community_resolution: float = Field(
        0.2,
        gt=0,
        description="Leiden resolution: lower gives fewer, larger communities (0.2: about 7 top-level "
        "communities on a generated world of paper 000's size, as the paper reports)",
    )
    max_cluster_size: int = Field(10, ge=2, description="hierarchical: a larger cluster is split one level down")
    community_levels: int = Field(1, ge=1, le=8, description="hierarchy levels kept as community reports (1 = top)")
    summarize: bool = Field(True, description="write community summaries with the LLM")
    max_summaries: int | None = Field(
        40,
        ge=0,
        description="largest communities summarised by the LLM; the rest get a member-list summary",
    )
    summary_max_tokens: int = Field(160, ge=16, le=4096)
    seed: int = 0

    @field_validator("chunk_overlap")
    @classmethod
    def _overlap_below_size(cls, value: int, info: Any) -> int:
        size = info.data.get("chunk_size", 200)
        if value >= size:
            raise ValueError(f"chunk_overlap ({value}) must be smaller than chunk_size ({size})")
        return value

    def llm_call_bound(self, text_units: int | None = None) -> int | None:
        """At most how many LLM calls a build makes: its extractions (one per text unit, when the
        count of ``text_units`` is known, up to the cap) and summaries (None when a step has no cap
        and no count, so the figure depends on the data)."""
        extractions = self.max_extractions
        if text_units is not None:
            extractions = text_units if extractions is None else min(extractions, text_units)
        extractions = extractions if self.extract else 0
        summaries = self.max_summaries if self.summarize else 0
        return None if extractions is None or summaries is None else extractions + summaries

    def extraction_settings(self, entity_types: tuple[str, ...] | None = None) -> ExtractionSettings:
        extra = {"entity_types": entity_types} if entity_types else {}
        return ExtractionSettings(
            max_entities=self.max_entities_per_unit,
            max_relations=self.max_relations_per_unit,
            max_tokens=self.extraction_max_tokens,
            seed=self.seed,
            **extra,
        )

    def community_settings(self) -> CommunitySettings:
        return CommunitySettings(
            hierarchical=self.community_algorithm == "hierarchical",
            resolution=self.community_resolution,
            max_cluster_size=self.max_cluster_size,
            levels=self.community_levels,
            scope=self.community_scope,
            seed=self.seed,
        )

    def summary_settings(self) -> SummarySettings:
        return SummarySettings(
            summarize=self.summarize,
            max_summaries=self.max_summaries,
            max_tokens=self.summary_max_tokens,
            seed=self.seed,
        )


def with_preset(data: Any, presets: dict[str, dict[str, Any]]) -> Any:
    """Options as a suite gave them, with its ``preset``'s values filled in where it gave none
    (an option given beside the preset wins); for a ``model_validator(mode="before")``."""
    if isinstance(data, dict) and data.get("preset") in presets:
        return {**presets[data["preset"]], **data}
    return data
