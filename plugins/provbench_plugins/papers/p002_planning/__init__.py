"""Paper 002, *Reasoning Over the Graph: From GraphRAG to Planning Agents*, as one plugin: the
confidence-gated planning loop (:mod:`.loop`, seeds in :mod:`.seeds`, prompt in :mod:`.prompts`)
and its report section (:mod:`.report`: rounds, cost and the accuracy/coverage trade-off of a sweep).

The knowledge base it was written for (a curriculum concept graph) is the ``concept-graph`` KB
builder and the ``curriculum`` dataset loader; the abstention, calibration and cost metrics are
general (``provbench_plugins.metrics``), and so is the edge-invalidation intervention
(``provbench_plugins.interventions``).
"""

from __future__ import annotations

from provbench import hookimpl

PROVBENCH_NAMESPACE = "p002"


@hookimpl
def provbench_register_systems():
    from .loop import PlanningLoop

    return {PlanningLoop.name: PlanningLoop}


@hookimpl
def provbench_report_sections(run):
    from .report import sections

    return sections(run)
