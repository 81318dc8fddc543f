"""Commands that read finished runs: ``report`` (the HTML report again), ``compare`` (runs side by
side), ``export`` (records as a table), ``check`` (CI assertions), ``traces`` (OpenTelemetry spans)
and ``audit`` (the leak guard again, offline). :mod:`provbench.cli` adds them to the ``provbench``
group; heavy modules load inside them. Also how ``validate`` shows what it found (:func:`show_validity`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from .cli_options import out_option

console = Console(soft_wrap=True)
RUN_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
EXIT_AUDIT_DIFFERS = 7  # provbench audit: a unit's recorded leak verdict is not what its records give


@click.command("report")
@click.argument("run_dir", type=RUN_DIR)
def report_cmd(run_dir: Path) -> None:
    """(Re)write the HTML report of RUN_DIR."""
    from .report import write_report

    console.print(f"report: {write_report(run_dir)}", markup=False)


@click.command("compare")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@out_option()
def compare_cmd(runs: tuple[Path, ...], out: Path | None) -> None:
    """Report two or more runs side by side; each is tested against the first. Warns on every way
    the runs differ besides their systems (dataset, questions, knowledge base, model, judge, versions,
    suite settings); means and tests use the questions every run answered."""
    from .report import write_comparison

    def warn(line: str) -> None:
        Console(stderr=True, soft_wrap=True).print(f"[yellow]warning:[/] {escape(line)}", highlight=False)

    console.print(f"comparison: {write_comparison(runs, out, warn)}", markup=False)


@click.command("export")
@click.argument("run_dir", type=RUN_DIR)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "csv", "jsonl"]),
    default="parquet",
    show_default=True,
    help="File format of the table.",
)
@out_option("Output file (default: RUN_DIR/records.FORMAT).")
def export_cmd(run_dir: Path, fmt: str, out: Path | None) -> None:
    """Write RUN_DIR's records as one table, one row per unit: key, question, answer, status,
    footprint, tokens, the leak guard's verdict and every score (score.NAME)."""
    from .export import export_run

    console.print(f"exported: {export_run(run_dir, fmt, out)}", highlight=False, markup=False)


@click.command("check")
@click.argument("run_dir", type=RUN_DIR)
def check_cmd(run_dir: Path) -> None:
    """Check RUN_DIR's assertions (the suite's `assert:`) again and rewrite its summary.json and
    junit.xml, as `provbench run` does when it finishes.

    Exit status: 0 every assertion holds and every unit ran, 3 units failed, 5 an assertion failed,
    6 the suite's budget stopped the run."""
    status = show_gates(run_dir)
    console.print(checked_line(run_dir), highlight=False, markup=False)
    raise SystemExit(status)


def checked_line(run_dir: Path) -> str:
    """What `check` looked at, from the summary.json it just wrote (so success is not silence)."""
    import json

    from .gates import JUNIT_FILE, SUMMARY_FILE

    data = json.loads((run_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    units, asserted = data["units"], len(data["assertions"])
    verdict = "passed" if data["passed"] else f"not passed (exit status {data['exit_status']})"
    return (
        f"checked {run_dir}: {units['ok']} of {units['total']} unit(s) ran, {units['failed']} failed; "
        + (f"{asserted} assertion(s), {data['assertions_failed']} failed" if asserted else "the suite asserts nothing")
        + (f"; stopped by the budget: {data['stopped']}" if data.get("stopped") else "")
        + f"; {verdict}; wrote {SUMMARY_FILE} and {JUNIT_FILE}"
    )


def show_gates(run_dir: Path) -> int:
    """Write the run's CI files, print its assertions' verdicts; returns the exit status they give."""
    from .gates import JUNIT_FILE, SUMMARY_FILE, write_ci_files

    data = write_ci_files(run_dir)
    for result in data["assertions"]:
        verdict = "[green]passed[/]" if result["passed"] else "[red]FAILED[/]"
        console.print(f"assert {escape(result['name'])}: {escape(result['message'])} {verdict}", highlight=False)
    if data["assertions"]:
        console.print(
            f"{data['assertions_failed']} of {len(data['assertions'])} assertion(s) failed; "
            f"{escape(str(run_dir / SUMMARY_FILE))}, {escape(str(run_dir / JUNIT_FILE))}",
            highlight=False,
        )
    return data["exit_status"]


@click.command("traces")
@click.argument("run_dir", type=RUN_DIR)
@out_option("Write the spans as OTLP/JSON lines to this file.")
@click.option(
    "--endpoint",
    default=None,
    help="Send the spans by OTLP/HTTP (protobuf), e.g. http://127.0.0.1:6006/v1/traces for a local Phoenix.",
)
@click.option(
    "--phoenix",
    default=None,
    metavar="URL",
    help="A Phoenix server, e.g. http://127.0.0.1:6006: "
    "the spans to URL/v1/traces and every score as a span annotation (Phoenix's evaluations).",
)
@click.option(
    "--project",
    default=None,
    help="The project the spans land in (default: the run's own, "
    "SUITE-RUNID; give the suite's name to keep its runs together).",
)
@click.option(
    "--header",
    "headers",
    multiple=True,
    metavar="KEY=VALUE",
    help="HTTP header for the endpoint and Phoenix (repeatable), e.g. an authorization the backend needs.",
)
def traces_cmd(
    run_dir: Path,
    out: Path | None,
    endpoint: str | None,
    phoenix: str | None,
    project: str | None,
    headers: tuple[str, ...],
) -> None:
    """Export RUN_DIR's trajectories as OpenTelemetry spans (OpenInference conventions): one trace
    per unit, with retrieval, tool and LLM spans; to Phoenix with the scores as annotations. Needs
    the otel extra (pip install 'provbench[otel]')."""
    from .errors import UserError
    from .phoenix import annotate_scores
    from .results.data import load_run
    from .tracing import export_traces, project_name

    pairs = dict(h.partition("=")[::2] for h in headers)
    if any(not k or not v for k, v in pairs.items()):
        raise UserError("--header expects KEY=VALUE")
    if phoenix is not None and endpoint is not None:
        raise UserError("traces: give --endpoint or --phoenix, not both (--phoenix sends to URL/v1/traces)")
    endpoint = phoenix.rstrip("/") + "/v1/traces" if phoenix is not None else endpoint
    count = export_traces(run_dir, out=out, endpoint=endpoint, headers=pairs, project=project)
    console.print(
        f"{count} span(s) exported" + (f" to {out}" if out else "") + (f" to {endpoint}" if endpoint else ""),
        highlight=False,
        markup=False,
    )
    if phoenix is not None:
        run = load_run(run_dir)
        annotated = annotate_scores(run, phoenix, headers=pairs)
        console.print(
            f"{annotated} score(s) annotated in {phoenix}, project {project or project_name(run)}",
            highlight=False,
            markup=False,
        )


@click.command("audit")
@click.argument("run_dir", type=RUN_DIR)
def audit_cmd(run_dir: Path) -> None:
    """Re-run the leak guard on RUN_DIR's intervention units from their records alone (the requests
    and hidden sets they keep, over the run's knowledge base; no model is called) and print each
    verdict beside the recorded one.

    Exit status: 0 every verdict reproduced, 7 some differ (a record changed after the run)."""
    from collections import Counter

    from .audit import audit_run

    audited = audit_run(run_dir)
    for unit in audited:
        mark = "" if unit.same else f"  [red]differs: recorded {escape(unit.recorded)}[/]"
        note = f"  ({escape(unit.note)})" if unit.note else ""
        console.print(f"{escape(unit.key)}: {escape(unit.audited)}{mark}{note}", highlight=False)
    counts = Counter(unit.audited for unit in audited)
    differ = sum(not unit.same for unit in audited)
    console.print(
        f"audit: {len(audited)} unit(s): "
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + (f"; [red]{differ} differ from the records[/]" if differ else "; every recorded verdict reproduced"),
        highlight=False,
    )
    raise SystemExit(EXIT_AUDIT_DIFFERS if differ else 0)


def show_validity(validity: Any, console: Console, err_console: Console) -> None:
    """The verdicts, the claim x sham matrix and the controls' differences from the suite; on
    stderr, the claims not shown, each sham a claim has no power against, and failed control units."""
    from .listing import show_table

    rows = [
        (v.claim, v.control, v.expected, v.observed, "–" if v.p_value is None else f"{v.p_value:.3g}", v.status)
        for v in validity.verdicts
    ]
    show_table(
        console,
        f"suite validity: {validity.suite_name}",
        ("claim", "control", "expected", "observed", "p", "verdict"),
        rows,
        wrap=("claim", "expected", "observed"),
    )
    for v in (v for v in validity.verdicts if v.expected_failure or v.open):
        why = f"expected to fail: {v.expected_failure}" if v.expected_failure else f"open: {v.open}"
        console.print(f"  {escape(v.claim)}: {escape(why)}", highlight=False)
    show_table(
        console,
        "power against shams",
        ("claim", "sham", "power", "observed"),
        [(p.claim, p.sham, p.shown_status, p.observed) for p in validity.power],
        wrap=("claim", "sham", "observed"),
    )
    for line in validity.differences or ["none: the controls ran the suite's own systems, interventions and options"]:
        console.print(f"  controls differ from the suite: {escape(line)}", highlight=False)
    for line in validity.warnings():  # loud: the verdicts above may certify nothing of this suite
        err_console.print(f"[yellow]warning:[/] {escape(line)}", highlight=False)
    failed = sorted({v.claim for v in validity.failures})
    if failed:
        err_console.print(f"[red]not detectable:[/] {escape(', '.join(failed))}", highlight=False)
    for row in validity.powerless:
        err_console.print(f"[red]no power against {escape(row.sham)}:[/] {escape(row.claim)}", highlight=False)
    if validity.failed_units:
        err_console.print(
            f"[yellow]{validity.failed_units} control unit(s) failed[/]: see the control runs' reports "
            f"({escape(', '.join(validity.runs.values()))})",
            highlight=False,
        )
