"""Paper 001's perturbation explanations as enumerated context-level interventions.

``kg-node-removal``, ``kg-edge-removal`` and ``kg-subpath-removal`` list one variant per node,
edge or sub-path of every path in a KGRAG-Ex baseline trace (see :mod:`.paths` for the
definitions) and hand :meth:`KGRAGEx.resume` the paths with that one element removed, so only the
stages after path retrieval re-run. A trace without KGRAG-Ex paths (another system, or the
fallback) lists no variant. ``kg-subpath-removal`` takes ``rule``: ``paper`` (drop the triplet's
line, as Table 2) or ``authors`` (blank both nodes and the edge in place, as the authors' code);
a suite that runs both gets Table 4 under both readings.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from provbench.model import Question, Trace
from provbench.plugin_api import Intervention, Variant

from .paths import apply_variant, enumerate_variants


def kg_paths(trace: Trace) -> list[dict] | None:
    state = trace.artifacts.get("kgrag")
    paths = state.get("paths") if isinstance(state, dict) else None
    return paths if isinstance(paths, list) else None


class PathElementRemoval(Intervention):
    """Remove one element of the retrieved KG path per variant (paper 001, section 4)."""

    level = "context"
    element = ""  # "node", "edge" or "subpath"

    def variants(self, question: Question, baseline: Trace, rng: random.Random) -> list[Variant]:
        paths = kg_paths(baseline)
        if not paths:
            return []
        return [Variant(**v) for v in enumerate_variants(paths, self.element, self.rule)]

    @property
    def rule(self) -> str:
        return "paper"

    def perturb(self, question: Question, baseline: Trace, rng: random.Random, **kwargs: Any) -> Trace:
        variant: Variant | None = kwargs.get("variant")
        paths = kg_paths(baseline)
        if variant is None or paths is None:
            raise ValueError(f"{self.name}: needs a variant and a KGRAG-Ex baseline trace")
        perturbed = baseline.model_copy(deep=True)
        perturbed.artifacts["kgrag"] = {**perturbed.artifacts["kgrag"], "paths": apply_variant(paths, variant.data)}
        perturbed.artifacts["perturbation"] = {"kind": self.element, "variant": variant.id}
        return perturbed


class NodeRemoval(PathElementRemoval):
    """Remove one node of the retrieved path (its name becomes "__"); one variant per node."""

    name = "kg-node-removal"
    element = "node"


class EdgeRemoval(PathElementRemoval):
    """Remove one edge's relation from the retrieved path; one variant per edge."""

    name = "kg-edge-removal"
    element = "edge"


class SubpathOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rule: Literal["paper", "authors"] = "paper"


class SubpathRemoval(PathElementRemoval):
    """Remove one sub-path (node, edge, node triplet) from the retrieved path; one variant each:
    its line dropped (``rule: paper``, Table 2) or its three elements blanked (``rule: authors``)."""

    name = "kg-subpath-removal"
    element = "subpath"
    Options = SubpathOptions

    @property
    def rule(self) -> str:
        return self.options.rule


KG_INTERVENTIONS = (NodeRemoval, EdgeRemoval, SubpathRemoval)
