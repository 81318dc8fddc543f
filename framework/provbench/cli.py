"""The ``provbench`` command. Heavy modules are imported inside commands so --help stays fast."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape

from .cli_generate import generate_cmd
from .cli_init import init_cmd
from .cli_options import MODEL_HELP, PLUGIN_OPTION, out_option
from .cli_results import audit_cmd, check_cmd, compare_cmd, export_cmd, report_cmd, show_gates, traces_cmd
from .listing import print_json, show_table

if TYPE_CHECKING:
    from .suite import ExecutorSpec

# soft_wrap: lines are never cut or folded to a width (a pipe or a file has none; a terminal wraps them)
console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)
EXIT_USAGE = 2  # a UserError: bad suite, dataset, option, or a directory in use
EXIT_UNITS_FAILED = 3  # the run finished, but some units are recorded as failed
EXIT_CLAIM_NOT_DETECTABLE = 4  # provbench validate: a claim's controls did not show what it says
EXIT_BUDGET = 6  # the suite's budget stopped the run before every unit ran (run again with a larger one)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


class ProvbenchGroup(click.Group):
    """Turns provbench's own user-facing errors, and the OS's (a file that cannot be written), into
    one clear line and exit code 2 (redacted: an error may quote a provider's reply; escaped: it
    may quote a path or label holding ``[...]``)."""

    def invoke(self, ctx: click.Context):
        from .errors import UserError
        from .secrets import redact, redacted_logs

        try:
            with redacted_logs():  # every command's log lines (kb build's provider errors too)
                return super().invoke(ctx)
        except UserError as exc:
            _print_error(redact(str(exc)))
        except OSError as exc:  # a read-only folder, a full disk, a directory in a file's place: say where
            where = f"{exc.filename}: " if exc.filename else ""
            _print_error(redact(f"{where}{exc.strerror or exc}"))
        except KeyboardInterrupt:  # the first Ctrl-C stops at once (units still running are dropped)
            err_console.print(
                "[yellow]interrupted[/]: a run keeps every unit recorded so far; the same command resumes it",
                highlight=False,
            )
            sys.exit(EXIT_INTERRUPTED)


def _print_error(text: str) -> None:
    err_console.print(f"[bold red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)
    sys.exit(EXIT_USAGE)


@click.group(cls=ProvbenchGroup)
@click.version_option(package_name="provbench")
def main() -> None:
    """provbench: evaluate what GraphRAG answers depend on."""


@main.command("plugins")
@PLUGIN_OPTION
@JSON_OPTION
def plugins_cmd(as_json: bool) -> None:
    """List every registered plugin: kind, full name, version, source (a table on a terminal,
    tab-separated lines in a pipe)."""
    from .registry import default_plugin_manager, default_registry, section_providers

    columns = ("kind", "name", "version", "source", "description")
    rows = [
        (reg.kind, reg.name, reg.version, reg.source, reg.description)
        for reg in default_registry().all() + section_providers(default_plugin_manager())
    ]
    if as_json:
        return print_json(console, [dict(zip(columns, row)) for row in rows])
    show_table(console, "provbench plugins", columns, rows, wrap=("source", "description"))


@main.command("suites")
@JSON_OPTION
def suites_cmd(as_json: bool) -> None:
    """List the built-in suites (run one with `provbench run NAME`)."""
    from .bundled import builtin_suites

    columns = ("name", "description", "file")
    rows = [(suite.name, suite.description, str(suite.path)) for suite in builtin_suites()]
    if as_json:
        return print_json(console, [dict(zip(columns, row)) for row in rows])
    show_table(console, "built-in suites", columns, rows, wrap=("description", "file"))


@main.group("data")
def data_group() -> None:
    """Inspect datasets."""


@data_group.command("info")
@click.argument("dataset")
@click.option("--loader", default=None, help="Dataset loader (default: the one loader that recognises DATASET).")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="Loader option (repeatable).")
@JSON_OPTION
def data_info_cmd(dataset: str, loader: str | None, options: tuple[str, ...], as_json: bool) -> None:
    """Load and validate DATASET (a file; with --loader a hub id), print its counts; exit non-zero on bad input."""
    from .datainfo import data_info
    from .registry import default_registry
    from .suite_yaml import parse_option_pairs

    info = data_info(default_registry(), dataset, loader, parse_option_pairs(options))
    if as_json:
        return print_json(
            console,
            {
                "source": str(info.source),
                "records": info.records,
                "loader": info.loader,
                "facets": {k: dict(v) for k, v in info.facets.items()},
                "choices": dict(info.choices or {}),
                "with_aliases": info.with_aliases,
            },
        )
    console.print(
        f"{escape(str(info.source))}: [bold]{info.records}[/] record(s), loader {escape(repr(info.loader))}",
        highlight=False,
    )
    for facet, counts in info.facets.items():
        _print_counts(f"per {facet}", counts)
    if info.choices:
        _print_counts("number of choices", {str(k): v for k, v in sorted(info.choices.items())})
    if info.with_aliases:
        console.print(f"questions with alias answers: {info.with_aliases}")


def _print_counts(title: str, counts) -> None:
    rows = [(value, count) for value, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    show_table(console, title, ("value", "records"), rows, wrap=("value",), right=("records",))


@main.group("kb")
def kb_group() -> None:
    """Build and describe knowledge bases."""


@kb_group.command("build")
@PLUGIN_OPTION
@click.argument("source")
@click.option("--model", default=None, help="LLM for extraction and summaries (default: the suite's, or embedded).")
@click.option("--limit", type=int, default=None, help="Use at most N questions.")
@click.option("--loader", default=None, help="Dataset loader for a dataset file (default: the one that recognises it).")
@click.option("--builder", default=None, help="KB builder, required for a dataset file (see `provbench plugins`).")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="Builder option (repeatable).")
@out_option(
    "For a dataset file: the KB directory (default: reports/kb/<file name>). For a suite: the run "
    "directory the KB is for, as `run --out` (default: reports/<suite name>); a suite's KB lives "
    "in OUT/../.kb-cache unless the suite names its directory, where `run` and `plan` look.",
    directory=True,
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=None,
    help="Concurrent LLM calls for a dataset file (default: the builder option max_workers, else 2).",
)
@click.option(
    "--executor",
    type=click.Choice(["threads", "ray"]),
    default=None,
    help="ray: embed the indices with a Ray Data job (default: the suite's executor; threads embeds in this process).",
)
@click.option(
    "--ray-address",
    default=None,
    help="Ray cluster to join ('auto': a running one; implies --executor ray; default: start a local one).",
)
def kb_build_cmd(
    source: str,
    model: str | None,
    limit: int | None,
    loader: str | None,
    builder: str | None,
    options: tuple[str, ...],
    out: Path | None,
    concurrency: int | None,
    executor: str | None,
    ray_address: str | None,
) -> None:
    """Build (or reuse) a knowledge base from SOURCE: a suite (file or built-in name) or a dataset file."""
    from . import runner
    from .bundled import resolve_suite
    from .errors import UserError
    from .kb import health
    from .suite_yaml import parse_option_pairs

    spec = _executor_spec(executor, ray_address)
    path = Path(source)
    if path.suffix in {".yaml", ".yml"} or not path.exists():
        kb_dir, stats, reused = runner.build_suite_kb(
            resolve_suite(source), model=model, limit=limit, console=console, executor=spec, out=out
        )
    else:
        if builder is None:
            from .registry import default_registry

            known = ", ".join(default_registry().names("kb_builder"))
            raise UserError(f"kb build {source}: name the knowledge-base builder with --builder (known: {known})")
        kb_dir, stats, reused = runner.build_dataset_kb(
            path,
            out or Path("reports/kb") / path.stem,
            loader=loader,
            builder=builder,
            model=model or "embedded",
            limit=limit,
            options=parse_option_pairs(options),
            console=console,
            concurrency=concurrency,
            executor=spec,
        )
    console.print(f"knowledge base {'reused' if reused else 'built'}: {kb_dir}", markup=False)
    _print_stats(stats, degenerate=health.degenerate_reasons_at(kb_dir))


def _executor_spec(executor: str | None, ray_address: str | None) -> "ExecutorSpec | None":
    """The ``ExecutorSpec`` that ``--executor`` and ``--ray-address`` ask for (None: the suite's)."""
    from .errors import UserError
    from .suite import ExecutorSpec

    if ray_address is not None and executor == "threads":
        raise UserError("--ray-address goes with --executor ray, not threads")
    if executor == "ray" or ray_address:
        return ExecutorSpec(kind="ray", address=ray_address)
    return ExecutorSpec() if executor == "threads" else None


@kb_group.command("info")
@click.argument("kb_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@JSON_OPTION
def kb_info_cmd(kb_dir: Path, as_json: bool) -> None:
    """Describe the knowledge base at KB_DIR (paragraphs, text units, entities, ...)."""
    from .kb import KnowledgeBase, health
    from .secrets import Redactor

    kb = KnowledgeBase.open(kb_dir, read_only=True)
    try:
        degenerate = health.kb_degenerate_reasons(kb)
        if as_json:
            return print_json(
                console,
                {
                    "stats": kb.stats().model_dump(mode="json"),
                    "degenerate": degenerate,
                    "build_info": Redactor.for_run().data(kb.build_info),
                },
            )
        _print_stats(kb.stats(), kb.build_info, degenerate)
    finally:
        kb.close()


def _print_stats(stats, build_info: dict | None = None, degenerate: list[str] | None = None) -> None:
    """Why the KB is degenerate (first), its counts (beside a paper's it follows), then its build info."""
    from .kb.info import count_table, detail_lines

    for reason in degenerate or []:
        err_console.print(f"[bold red]degenerate knowledge base[/]: {escape(reason)}", highlight=False)
    info = build_info or {}
    paper = info.get("paper") or {}
    paper_columns, rows = count_table(stats, info, blank="")
    columns = ["item", "count", *paper_columns]
    show_table(console, "knowledge base", columns, rows, right=columns[1:])
    if paper.get("title"):
        console.print(f"  paper: {paper['title']}", highlight=False, markup=False)
    for heading, text in detail_lines(info):
        colour = "yellow" if heading == "problem" else "bold"
        console.print(f"  [{colour}]{heading}[/]: {escape(text)}", highlight=False)


@main.command("run")
@click.argument("suite")
@PLUGIN_OPTION
@click.option("--model", default=None, help=MODEL_HELP)
@click.option("--limit", type=int, default=None, help="Run at most N questions.")
@out_option("Run directory (default: reports/<suite name>). An existing one is resumed.", directory=True)
@click.option(
    "--retry-failed/--no-retry-failed",
    default=True,
    show_default=True,
    help="On resume, run the units that failed before again.",
)
@click.option(
    "--judge",
    default=None,
    help="Model of the LLM-judged metrics (default: the suite's judge, else the systems' model).",
)
@click.option(
    "--controls",
    is_flag=True,
    help="First check the suite's claims on its known-truth controls (as `provbench validate`); the report shows them.",
)
def run_cmd(
    suite: str,
    model: str | None,
    limit: int | None,
    out: Path | None,
    retry_failed: bool,
    judge: str | None,
    controls: bool,
) -> None:
    """Run SUITE (a suite file, or a built-in suite's name: see `provbench suites`), resuming its
    run directory if it exists, and write the HTML report.

    Exit status: 0 all units ok, 2 a usage or input error, 3 finished with failed units, 4 (with
    --controls) a claim is not detectable, 5 one of the suite's assertions failed (its summary.json
    and junit.xml are in the run directory), 6 the suite's budget stopped the run (run it again with
    a larger budget to continue), 130 interrupted (Ctrl-C; the same command resumes)."""
    from .bundled import resolve_suite
    from .runner import run_suite
    from .run_store import RunStore
    from .units import NO_BASELINE

    validity = _validate(resolve_suite(suite), out) if controls else None
    run_dir = run_suite(
        resolve_suite(suite), model=model, limit=limit, out=out, console=console, retry_failed=retry_failed, judge=judge
    )
    console.print(f"report: {run_dir / 'report.html'}", markup=False)
    gates = show_gates(run_dir)
    if validity is not None and validity.failed_claims:  # the report marks the run uncertified too
        err_console.print(f"[red]uncertified run[/]: {escape(', '.join(validity.failed_claims))}", highlight=False)
        sys.exit(EXIT_CLAIM_NOT_DETECTABLE)
    store = RunStore(run_dir)
    stopped = store.read_manifest().stopped
    if stopped:
        err_console.print(f"[yellow]stopped by the budget[/]: {escape(stopped)}", highlight=False)
        sys.exit(EXIT_BUDGET)
    failed = [r for r in store.load_records().values() if r.status == "failed"]
    if failed:
        knock_on = sum(NO_BASELINE in (r.error or "") for r in failed)
        because = f" ({knock_on} of them because their baseline failed)" if knock_on else ""
        err_console.print(
            f"[yellow]{len(failed)} unit(s) failed[/]{because}: see their errors in the report; "
            "re-run the same command to retry them (that heals transient faults such as "
            "timeouts; a model that answers the same input the same way fails again)",
            highlight=False,
        )
    if gates:  # provbench.gates: 5 an assertion failed (it outranks 3, failed units)
        sys.exit(gates)


@main.command("validate")
@click.argument("suite")
@PLUGIN_OPTION
@out_option(
    "The suite's run directory (default: reports/<suite name>); control runs go to OUT/controls/.", directory=True
)
def validate_cmd(suite: str, out: Path | None) -> None:
    """Check SUITE's claims on its known-truth controls, offline: control LLMs of known behaviour run
    the suite's `controls:` block (never the suite's model), and each claim says what their runs must
    show (docs/controls.md). Prints claim x control x expected x observed x verdict.

    Exit status: 0 every claim as the suite says, 2 a usage or input error, 3 control units failed,
    4 a claim is not detectable."""
    from .bundled import resolve_suite

    validity = _validate(resolve_suite(suite), out)
    if validity.failed_claims:
        sys.exit(EXIT_CLAIM_NOT_DETECTABLE)
    if validity.failed_units:
        sys.exit(EXIT_UNITS_FAILED)


def _validate(suite: Path, out: Path | None):
    from .cli_results import show_validity
    from .controls.validate import validate_suite

    validity = validate_suite(suite, out=out, console=console)
    show_validity(validity, console, err_console)
    return validity


@main.command("plan")
@click.argument("suite")
@PLUGIN_OPTION
@click.option("--model", default=None, help=MODEL_HELP)
@click.option("--judge", default=None, help="Override the judge model of LLM-judged metrics.")
@click.option("--limit", type=int, default=None, help="Plan for at most N questions.")
@out_option(
    "The run directory the run would use (default: reports/<suite name>): what it holds is not run again.",
    directory=True,
)
@click.option(
    "--concurrency", type=click.IntRange(1, 256), default=None, help="For the time estimate (default: the suite's)."
)
@click.option(
    "--latency",
    type=click.FloatRange(0, None),
    default=1.0,
    show_default=True,
    help="Seconds an LLM call takes, for the time estimate.",
)
@click.option(
    "--sample",
    type=click.IntRange(1, 50),
    default=2,
    show_default=True,
    help="Questions run offline through each system to measure prompt sizes.",
)
@JSON_OPTION
def plan_cmd(
    suite: str,
    model: str | None,
    judge: str | None,
    limit: int | None,
    out: Path | None,
    concurrency: int | None,
    latency: float,
    sample: int,
    as_json: bool,
) -> None:
    """Print what running SUITE would do, before anything runs: units, expected LLM calls and tokens
    per system and intervention, the judge's calls, estimated cost and time, and what is already
    recorded or cached. No request leaves the machine."""
    from .bundled import resolve_suite
    from .plan import make_plan
    from .plan_output import COLUMNS, plan_json, plan_rows, plan_summary
    from .local_plugins import plugin_setup
    from .runner import default_run_dir, prepare_suite, suite_kb_dir

    _, registry = plugin_setup(resolve_suite(suite))
    loaded = prepare_suite(resolve_suite(suite), registry, model, limit, judge)
    run_dir = out or default_run_dir(loaded)
    kb_dir = suite_kb_dir(loaded, run_dir) if loaded.suite.knowledge_base else None
    plan, chain = make_plan(
        loaded, registry, run_dir, kb_dir, sample=sample, concurrency=concurrency, latency_s=latency
    )
    if as_json:
        return print_json(console, plan_json(plan, chain))
    show_table(
        console,
        f"plan: {plan.suite}, {plan.questions} question(s)",
        COLUMNS,
        plan_rows(plan),
        wrap=("notes",),
        right=COLUMNS[2:8],
    )
    for line in plan_summary(plan, chain):
        console.print(line, highlight=False, markup=False)


for command in (report_cmd, compare_cmd, export_cmd, check_cmd, traces_cmd, init_cmd, generate_cmd, audit_cmd):
    main.add_command(command)


def entry() -> None:
    """The ``provbench`` command: :func:`main`, then a prompt exit with its status. The interpreter's
    teardown (finalising litellm, torch and the rest, module by module) took seconds after each
    command and does nothing a finished command needs: its files are closed by then, and output
    and logs are flushed here first. An uncaught error still leaves the ordinary way."""
    try:
        main()
    except SystemExit as done:  # click's standalone mode always ends here
        code = done.code
    else:
        code = 0
    if not isinstance(code, int):
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    for stream in (sys.stdout, sys.stderr, console.file, err_console.file):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    entry()
