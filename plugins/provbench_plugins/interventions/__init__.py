"""Built-in plugin: interventions any system can take (today: edge invalidation, :mod:`.edges`)."""

from __future__ import annotations

from provbench import hookimpl


@hookimpl
def provbench_register_interventions():
    from .edges import InvalidateRandomEdges, InvalidateUsedEdges

    return {cls.name: cls for cls in (InvalidateUsedEdges, InvalidateRandomEdges)}
