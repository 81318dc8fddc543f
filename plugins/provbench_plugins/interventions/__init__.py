"""Built-in plugin: interventions any system can take: edge invalidation (:mod:`.edges`: used and
random edges; :mod:`.gold_edges`: on and off the gold chain, and the graph as of a time), and the
report section that flags random controls smaller than their treatment (:mod:`.report`)."""

from __future__ import annotations

from provbench import hookimpl


@hookimpl
def provbench_register_interventions():
    from .edges import InvalidateRandomEdges, InvalidateUsedEdges
    from .gold_edges import AsOf, InvalidateGoldEdge, InvalidateOffChainEdge

    return {
        cls.name: cls
        for cls in (InvalidateUsedEdges, InvalidateRandomEdges, InvalidateGoldEdge, InvalidateOffChainEdge, AsOf)
    }


@hookimpl
def provbench_report_sections(run):
    from .report import control_size_sections

    return control_size_sections(run)
