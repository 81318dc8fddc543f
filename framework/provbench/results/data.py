"""A run directory as Python sees it: manifest, questions, typed records and metric values.

:func:`load_run` is provbench's public API for results (``provbench.load_run`` is this function):
:class:`RunData` holds the run's :class:`~provbench.model.RunRecord` objects and gives them as a
pandas DataFrame (:meth:`RunData.dataframe`, one row per unit, the rows ``provbench export``
writes). It is also what report-section plugins receive, so it offers the look-ups they need
(records by system and condition, metric values, the suite's options) without file access.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..errors import UserError
from ..model import BASELINE, Question, RunManifest, RunRecord
from .rules import plugin_key, select
from .stats import count_text
from ..run_store import RunStore, columns_of, flat_rows


@dataclass
class RunData:
    run_dir: Path
    manifest: RunManifest
    questions: dict[str, Question]
    records: list[RunRecord]
    metrics: dict[str, Any]

    @property
    def suite(self) -> dict[str, Any]:
        return self.manifest.suite

    @property
    def systems(self) -> list[str]:
        declared = [ref_key(s) for s in self.suite.get("systems", [])]
        seen = list(dict.fromkeys(r.key.system for r in self.records))
        return [s for s in declared if s in seen] + [s for s in seen if s not in declared]

    @property
    def conditions(self) -> list[str]:
        declared = [ref_key(i) for i in self.suite.get("interventions", [])]
        seen = [c for c in dict.fromkeys(r.key.condition for r in self.records) if c != BASELINE]
        return [c for c in declared if c in seen] + [c for c in seen if c not in declared]

    @property
    def excluded(self) -> set[str]:
        return set(self.metrics.get("excluded", []))

    @property
    def analysed(self) -> list[str]:
        return [q for q in self.question_ids if q not in self.excluded]

    @property
    def question_ids(self) -> list[str]:
        return list(self.questions) or list(dict.fromkeys(r.key.question_id for r in self.records))

    def report_option(self, name: str, default: Any) -> Any:
        return (self.suite.get("report") or {}).get(name, default)

    def stats_options(self) -> dict[str, Any]:
        """Bootstrap settings the suite asked for (resamples, confidence, seed)."""
        return {
            "resamples": int(self.report_option("bootstrap_resamples", 2000)),
            "confidence": float(self.report_option("confidence", 0.95)),
            "seed": int(self.report_option("seed", 0)),
        }

    @property
    def include_leaked(self) -> bool:
        """The suite's ``leak_guard.include_leaked``: leaked units count in intervention statistics."""
        return bool((self.suite.get("leak_guard") or {}).get("include_leaked", False))

    def select(self, system: str, condition: str = BASELINE, *, leaked: bool | None = None) -> list[RunRecord]:
        """Records for statistics, as :meth:`provbench.plugin_api.Results.select`: units the pairing
        rule leaves out are left out (:func:`provbench.results.rules.left_out_as`); ``leaked=True``: all."""
        return select(self.records, system, condition, self.include_leaked, leaked)

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per unit with its question's text, type and category (:func:`provbench.run_store.flat_rows`)."""
        return flat_rows(self.records, self.questions)

    def dataframe(self):
        """The run as a pandas DataFrame, one row per unit (:meth:`rows`); needs pandas
        (``pip install 'provbench[analysis]'``)."""
        try:
            import pandas as pd
        except ImportError:
            raise UserError(
                "RunData.dataframe needs pandas: pip install 'provbench[analysis]' "
                "(or `provbench export RUN --format csv` without it)"
            ) from None
        rows = self.rows()
        return pd.DataFrame(rows, columns=columns_of(rows))

    def plugin_names(self, section: str) -> dict[str, str]:
        """The suite's ``systems`` / ``interventions`` / ``metrics``: record key -> plugin name."""
        return {ref_key(ref): ref if isinstance(ref, str) else ref["name"] for ref in self.suite.get(section, [])}

    def uses(self, section: str, names: Iterable[str]) -> list[str]:
        """Record keys of the suite's plugins in ``section`` whose plugin name is one of ``names``
        (full ``ns/name`` or short); how a paper's report section finds its own systems."""
        wanted = set(names)
        return [
            key
            for key, name in self.plugin_names(section).items()
            if name in wanted or name.rsplit("/", 1)[-1] in wanted
        ]

    def metric_values(self, metric: str | None = None, *, prefix: str | None = None) -> list[dict[str, Any]]:
        """Values from metrics.json, by exact metric name or name prefix."""
        values = self.metrics.get("values", [])
        return [
            v
            for v in values
            if (metric is None or v["metric"] == metric) and (prefix is None or v["metric"].startswith(prefix))
        ]


def format_metric_value(v: dict[str, Any], with_note: bool = True) -> str:
    """A metrics.json value as "0.500 (3/6)", or "–" (with its note) when it has none."""
    value = v.get("value")
    if value is None:
        return "–" + (f" ({v['note']})" if with_note and v.get("note") else "")
    text = f"{value:.3f}"
    den, num = v.get("denominator"), v.get("numerator")
    if den and num is not None:
        num_text = count_text(num) if isinstance(num, (int, float)) else str(num)
        text += f" ({num_text}/{count_text(den)})" if isinstance(den, (int, float)) else f" ({num_text}/{den})"
    elif den:  # a mean over n records, not a count out of n
        text += f" (n={den:g})" if isinstance(den, (int, float)) else f" (n={den})"
    return text


def ref_key(ref: Any) -> str:
    """The record key of a plugin reference in a stored suite (the suite's own rule, :func:`plugin_key`)."""
    return plugin_key(ref) if isinstance(ref, str) else plugin_key(ref["name"], ref.get("label"))


def load_run(run_dir: str | Path) -> RunData:
    """Read a run directory (manifest, questions, records, metrics) into a :class:`RunData`."""
    run_dir = Path(run_dir)
    store = RunStore(run_dir)
    manifest = store.read_manifest()
    if manifest is None:
        raise UserError(f"{run_dir}: not a run directory (no manifest.json)")
    questions = {q.id: q for q in store.read_questions()}
    records = sorted(
        store.load_records().values(),
        key=lambda r: (r.key.system, r.key.condition, r.key.question_id, r.key.repeat, r.key.variant),
    )
    return RunData(run_dir, manifest, questions, records, store.read_metrics())
