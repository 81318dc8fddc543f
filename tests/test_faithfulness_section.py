"""The report's faithfulness section is titled by what ran: init's suites run no RAGAS
faithfulness, and a new user read a section named after it holding provenance scores only."""

from __future__ import annotations

from types import SimpleNamespace

from provbench_plugins.metrics.report import faithfulness_section


def run_with(*metrics: str) -> SimpleNamespace:
    values = [{"metric": m, "condition": "baseline", "system": "rag", "value": 0.5} for m in metrics]
    return SimpleNamespace(metric_values=lambda: values, systems=["rag"])


def test_without_ragas_the_section_is_titled_by_provenance_only():
    (section,) = faithfulness_section(run_with("provenance.cited_read"))
    assert section.title == "Trajectory provenance"
    assert "RAGAS" not in section.blocks[0].caption and "ran no ragas-faithfulness" in section.blocks[0].caption


def test_with_ragas_the_section_names_faithfulness():
    (section,) = faithfulness_section(run_with("provenance.cited_read", "ragas-faithfulness.cited"))
    assert section.title == "Faithfulness and trajectory provenance" and "RAGAS" in section.blocks[0].caption
