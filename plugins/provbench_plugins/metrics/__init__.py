"""Built-in plugin: metrics any paper's runs can use (outcomes, trajectory provenance, RAGAS faithfulness)."""

from __future__ import annotations

from provbench import hookimpl


@hookimpl
def provbench_register_metrics():
    from .outcomes import Accuracy, AccuracyDelta, Footprint, OutputChanged
    from .provenance import ProvenanceMetric
    from .ragas_faithfulness import RagasFaithfulness

    return {cls.name: cls for cls in (Accuracy, OutputChanged, AccuracyDelta, Footprint,
                                      ProvenanceMetric, RagasFaithfulness)}


@hookimpl
def provbench_report_sections(run):
    from .report import faithfulness_section

    return faithfulness_section(run)
