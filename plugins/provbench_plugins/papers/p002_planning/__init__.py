"""Paper 002, *Reasoning Over the Graph: From GraphRAG to Planning Agents*, as one plugin: the
confidence-gated planning loop (:mod:`.loop`, seeds in :mod:`.seeds`, the frontier's ranking in
:mod:`.frontier`, prompt in :mod:`.prompts`), its context measure and stale answers (:mod:`.metrics`:
``context-precision``, ``stale-answer``) and its report section (:mod:`.report`, :mod:`.comparison`: rounds, cost,
accuracy per hop count, paired tests between systems, the accuracy/coverage trade-off of a sweep)
and the paper's claims as checks on known-truth controls (:mod:`.claims`).

The knowledge base it was written for (a curriculum concept graph) is the ``concept-graph`` KB
builder and the ``curriculum`` dataset loader; the abstention, calibration and cost metrics are
general (``provbench_plugins.metrics``), and so are the edge interventions
(``provbench_plugins.interventions``: used, random, gold-chain and off-chain edge invalidation,
the graph as of a time).
"""

from __future__ import annotations

from provbench import hookimpl

PROVBENCH_NAMESPACE = "p002"


@hookimpl
def provbench_register_systems():
    from .loop import PlanningLoop

    return {PlanningLoop.name: PlanningLoop}


@hookimpl
def provbench_register_metrics():
    from .metrics import ContextPrecision, StaleAnswer

    return {ContextPrecision.name: ContextPrecision, StaleAnswer.name: StaleAnswer}


@hookimpl
def provbench_register_claims():
    from .known_truth import CLAIMS

    return {claim.name: claim for claim in CLAIMS}


@hookimpl
def provbench_report_sections(run):
    from .report import sections

    return sections(run)
