"""Built-in plugin: metrics any paper's runs can use (outcomes, trajectory provenance, RAGAS
faithfulness and the reference-based RAGAS scores, abstention, calibration and cost)."""

from __future__ import annotations

from provbench import hookimpl


@hookimpl
def provbench_register_metrics():
    from .outcomes import Accuracy, AccuracyDelta, ExactMatch, Footprint, OutputChanged, TokenF1
    from .provenance import ProvenanceMetric
    from .ragas_faithfulness import RagasFaithfulness
    from .ragas_reference import REFERENCE_METRICS
    from .selective import selective_metrics

    return {
        cls.name: cls
        for cls in (
            Accuracy,
            ExactMatch,
            TokenF1,
            OutputChanged,
            AccuracyDelta,
            Footprint,
            ProvenanceMetric,
            RagasFaithfulness,
            *REFERENCE_METRICS,
            *selective_metrics(),
        )
    }


@hookimpl
def provbench_report_sections(run):
    from .report import faithfulness_section
    from .selective_report import abstention_sections

    return faithfulness_section(run) + abstention_sections(run)
