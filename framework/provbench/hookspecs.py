"""The hooks a provbench plugin may implement.

Registration hooks return a mapping of ``name -> factory``: a class or callable that the
runner calls with the options a suite gives (validated against the class's ``Options`` pydantic
model when it declares one). A plugin module may set ``PROVBENCH_NAMESPACE = "p000"`` so its
names register as ``p000/<name>``; an entry point's name is the default namespace. Built-in plugins (``provbench_plugins``) use
exactly these hooks; a third-party package declares an entry point in the ``provbench``
group pointing at a module that implements some of them with ``@provbench.hookimpl``.

Lifecycle hooks let reporters watch a run without the runner knowing about them.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import pluggy

PROJECT = "provbench"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Factory = Callable[..., Any]


@hookspec
def provbench_register_systems() -> Mapping[str, Factory]:
    """Systems: factories returning a :class:`provbench.plugin_api.System`."""


@hookspec
def provbench_register_interventions() -> Mapping[str, Factory]:
    """Interventions: factories returning a :class:`provbench.plugin_api.Intervention`."""


@hookspec
def provbench_register_metrics() -> Mapping[str, Factory]:
    """Metrics: factories returning a :class:`provbench.plugin_api.Metric`."""


@hookspec
def provbench_register_dataset_loaders() -> Mapping[str, Factory]:
    """Dataset loaders: factories returning a :class:`provbench.plugin_api.DatasetLoader`."""


@hookspec
def provbench_register_kb_builders() -> Mapping[str, Factory]:
    """Knowledge-base builders: factories returning a :class:`provbench.plugin_api.KBBuilder`."""


@hookspec
def provbench_register_llm_backends() -> Mapping[str, Factory]:
    """LLM backends by model-id prefix: ``{"llama-cpp": factory}`` serves ``llama-cpp:<rest>`` (and
    the bare id ``llama-cpp``); ``factory(model_id, **params)`` returns an object with ``model_id``,
    ``config()`` and ``complete(request)`` (see :mod:`provbench.llm.backends`). Ids no prefix
    claims go to ``litellm``. A backend may also have ``bind_questions(questions)``: the runner
    calls it with the run's loaded questions before any unit runs (the known-truth controls of
    :mod:`provbench.controls` read each question's gold evidence from them, never from the graph)."""


@hookspec
def provbench_register_claims() -> Mapping[str, Factory]:
    """Claims a suite's ``controls:`` block checks (``provbench validate``): factories returning a
    :class:`provbench.controls.Claim`."""


@hookspec
def provbench_run_started(manifest: Any, run_dir: Any) -> None:
    """A run has started (or resumed); ``manifest`` is its RunManifest."""


@hookspec
def provbench_record_written(record: Any, run_dir: Any) -> None:
    """A RunRecord has been durably written to the run directory."""


@hookspec
def provbench_run_finished(manifest: Any, run_dir: Any) -> None:
    """Every unit of the run has a record; reports may be written now."""


@hookspec
def provbench_report_sections(run: Any) -> list[Any]:
    """Sections for a run's HTML report: a list of :class:`provbench.report.sections.Section`
    built from ``run`` (:class:`provbench.results.data.RunData`); [] when the run is not yours.
    Sections are placed by their ``order`` and rendered (escaped) by the core."""
