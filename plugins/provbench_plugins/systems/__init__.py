"""Built-in plugin: systems that belong to no paper. ``llamaindex`` runs a user's own LlamaIndex
pipeline, built by a factory the suite names, on the view of each unit (docs/integrations.md);
``recorded`` replays answers a system already produced (docs/own-data.md)."""

from __future__ import annotations

from provbench import hookimpl


@hookimpl
def provbench_register_systems():
    from .llamaindex import LlamaIndexSystem
    from .recorded import RecordedSystem

    return {LlamaIndexSystem.name: LlamaIndexSystem, RecordedSystem.name: RecordedSystem}
