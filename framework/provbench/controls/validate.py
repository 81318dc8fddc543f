"""``provbench validate SUITE``: run a suite's controls offline and check its claims.

For each control LLM of the ``controls:`` block, one ordinary run (a resumable run directory
under ``OUT/controls/<llm>/``, its LLM cache included) of the suite's own systems and
interventions (with the block's declared differences, :mod:`.configuration`) on the block's
dataset, with model ``control:<llm>`` and the stand-in interventions of the claims' shams; the
knowledge base is built once, in ``OUT/controls/kb``, with the schema-following test LLM (the
suite's own model is never used). Then every claim checks the runs
(:class:`~provbench.controls.ControlRuns`), and again under each sham (:mod:`.power`); the
verdicts, the claim x sham matrix and the differences go to ``OUT/validity.json`` (and into each
control run), where reports find them.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from .backend import VERSION, control_model_id
from ..results.claims import Claim, ControlRuns, Verdict
from ..model import BASELINE
from ..results.validity import Validity, cell_name, write_validity
from ..suite_controls import controls_configuration, describe_differences
from .power import power_rows
from .shams import sham_interventions, sham_plugin, shams_of, without_shams

if TYPE_CHECKING:
    import pluggy
    from rich.console import Console

    from ..registry import Registry
    from ..suite import ClaimRef, LoadedSuite, PluginRef


def validate_suite(
    suite_path: "str | Path | LoadedSuite",
    out: str | Path | None = None,
    console: "Console | None" = None,
    *,
    pm: "pluggy.PluginManager | None" = None,
) -> Validity:
    """Run the suite's controls (resuming earlier runs) and check its claims, and each claim
    again under its shams; writes and returns the verdicts and the power matrix. Raises a
    UserError when the suite declares no controls."""
    from ..local_plugins import plugin_setup
    from ..gates import SUMMARY_FILE, write_ci_files
    from ..report import load_run, write_report
    from ..suite import LoadedSuite, load_suite

    # the suite file's own `plugins:` join, as for `provbench run`: its systems are the controls' too
    pm, registry = plugin_setup(None if isinstance(suite_path, LoadedSuite) else suite_path, pm)
    loaded = suite_path if isinstance(suite_path, LoadedSuite) else load_suite(suite_path, registry)
    if loaded.suite.controls is None:
        raise UserError(f"{loaded.path}: the suite declares no controls (a 'controls:' block; see docs/controls.md)")
    out = Path(out) if out else Path("reports") / loaded.suite.name
    claims = [(ref, _claim(registry, ref)) for ref in loaded.suite.controls.claims]
    with _sham_plugin_registered(pm):
        run_dirs = {
            name: _run_control(loaded, name, out / "controls", claims, registry, pm, console)
            for name in loaded.suite.controls.llms
        }
    with_shams = ControlRuns({name: load_run(run_dir) for name, run_dir in run_dirs.items()})
    verdicts, power = _check_claims(claims, with_shams)
    validity = Validity(
        suite_name=loaded.suite.name,
        suite_sha256=loaded.sha256,
        verdicts=verdicts,
        power=power,
        differences=describe_differences(loaded.suite),
        runs={name: str(path) for name, path in run_dirs.items()},
        failed_units=sum(r.status == "failed" for run in with_shams.runs.values() for r in run.records),
        covers={
            ref.label or ref.name: _cells(claim.needs().systems, claim.needs().conditions) for ref, claim in claims
        },
        suite_cells=_suite_cells(loaded.suite),
    )
    write_validity(validity, out, *run_dirs.values())
    for run_dir in [*run_dirs.values(), *([out] if (out / "manifest.json").is_file() else [])]:
        write_report(run_dir, pm)
    if (out / SUMMARY_FILE).is_file():  # the run's summary.json says it is certified now
        write_ci_files(out)
    if console is not None:
        console.print(_where_certified(out), highlight=False, markup=False)
    return validity


def _check_claims(claims: list, with_shams: ControlRuns) -> tuple[list[Verdict], list]:
    """Every claim's verdicts on the controls' own runs, and its row of the power matrix."""
    verdicts, power = [], []
    for ref, claim in claims:
        own = check_claim(claim, ref, without_shams(with_shams))
        verdicts += [_noting_llm_free(v, claim.needs().systems, with_shams) for v in own]
        power += power_rows(ref, claim.about(), with_shams, own, partial(check_claim, claim, ref))
    return verdicts, power


def _where_certified(out: Path) -> str:
    """Which run these verdicts certify: the one in ``out`` (its report re-rendered), or none yet."""
    if (out / "manifest.json").is_file():
        return f"certification written into the run {out}: its report.html and summary.json re-rendered"
    return f"no run in {out} yet: provbench run SUITE --out {out} writes one whose report shows these verdicts"


def _noting_llm_free(verdict: Verdict, systems, runs: ControlRuns) -> Verdict:
    """A failed verdict says so when the claim's systems made no LLM call on its control: no
    control LLM can steer such a system (a picker of sentences, a fixed rule), so its claim
    cannot tell the controls apart."""
    run = runs.runs.get(verdict.control)
    records = [r for r in run.records if r.key.system in systems] if run is not None and not verdict.passed else []
    if not records or any(r.trace is not None and r.trace.llm_calls for r in records):
        return verdict
    note = f"; {', '.join(systems)} made no LLM call on this control, so no control LLM can steer it"
    return verdict.model_copy(update={"observed": verdict.observed + note})


def _cells(systems, conditions) -> list[str]:
    return [cell_name(s, c) for s in systems for c in conditions if c != BASELINE]


def _suite_cells(suite) -> list[str]:
    """The suite's own systems under its own interventions (what its tables show)."""
    systems = suite.intervention_systems or [s.key for s in suite.systems]
    return _cells(systems, [i.key for i in suite.interventions])


def _run_control(
    loaded: "LoadedSuite",
    name: str,
    controls_dir: Path,
    claims: list,
    registry: "Registry",
    pm: "pluggy.PluginManager",
    console: "Console | None",
) -> Path:
    """One control LLM's run (resumed when it exists), with the stand-ins of the shams of the
    claims that read this control."""
    from ..runner import run_suite

    if console is not None:
        console.print(f"control {name!r}: model {control_model_id(name)}", highlight=False, markup=False)
    shams = sham_interventions(
        [
            s
            for _, claim in claims
            if name in claim.needs().controls
            for s in shams_of(claim.about(), loaded.suite.controls.llms)
        ],
        controls_configuration(loaded.suite).interventions,
        registry,
    )
    run_dir = start_or_resume(controls_dir / slug(name), run_identity(loaded, name))
    return run_suite(
        controls_suite(loaded, name, controls_dir, shams),
        out=run_dir,
        console=console,
        pm=pm,
        kb_llm=_kb_llm(controls_dir),
        write_report=False,
    )


def _claim(registry: "Registry", ref: "ClaimRef") -> Claim:
    claim = registry.create("claim", ref.name, **ref.options)
    claim.name = ref.label or ref.name
    return claim


@contextmanager
def _sham_plugin_registered(pm: "pluggy.PluginManager"):
    """The stand-in interventions, registered on ``pm`` while the controls run."""
    plugin = sham_plugin(pm)
    pm.register(plugin, name=f"provbench-control-shams-{id(plugin)}")
    try:
        yield
    finally:
        pm.unregister(plugin)


def check_claim(claim: Claim, ref: "ClaimRef", runs: ControlRuns) -> list[Verdict]:
    """A claim's verdicts, named as the suite writes it (its label, else its name); a check that
    raises is one failed verdict saying why."""
    shown = ref.label or ref.name
    try:
        verdicts = list(claim.check(runs))
    except Exception as exc:  # noqa: BLE001 - a broken claim is a finding, not a crash
        verdicts = [
            Verdict(
                claim=shown,
                control="-",
                expected=claim.description or "the claim's check runs",
                observed=f"check failed: {type(exc).__name__}: {exc}"[:500],
                passed=False,
            )
        ]
    declared = {"claim": shown, "expected_failure": ref.expect_failure or "", "open": ref.open or ""}
    excused = ref.expect_not_measurable or {}  # per control: another control's unmeasured verdict still fails
    return [v.model_copy(update={**declared, "unmeasured_expected": excused.get(v.control, "")}) for v in verdicts]


def controls_suite(
    loaded: "LoadedSuite", llm: str, controls_dir: Path, shams: "list[PluginRef] | None" = None
) -> "LoadedSuite":
    """The suite one control LLM runs: the suite's own systems, interventions, exclusion, metrics
    and seed with the controls' declared differences, on the controls' data, with model
    ``control:<llm>``, the stand-in interventions of the claims' shams, threads, no subgraph
    pictures, and the shared KB directory."""
    from ..suite import ExecutorSpec, LoadedSuite, ModelSpec, ReportSpec, Suite

    own, c = loaded.suite, loaded.suite.controls
    config = controls_configuration(own)
    kb = c.knowledge_base
    if kb is not None and kb.directory is None:
        kb = kb.model_copy(update={"directory": str((controls_dir / "kb").resolve())})
    suite = Suite(
        name=f"{own.name}-controls-{slug(llm)}",
        description=f"known-truth control {llm!r} of suite {own.name!r} (provbench validate)",
        dataset=c.dataset,
        knowledge_base=kb,
        model=ModelSpec(id=control_model_id(llm)),
        systems=config.systems,
        interventions=config.interventions + list(shams or []),
        intervention_systems=config.intervention_systems,
        metrics=config.metrics,
        exclusion=config.exclusion,
        seed=own.seed,
        repeats=own.repeats,
        concurrency=own.concurrency,
        executor=ExecutorSpec(),
        report=ReportSpec(subgraph_pictures=False, bootstrap_resamples=200, title=f"{own.name}: control {llm}"),
    )
    return LoadedSuite(suite=suite, path=loaded.path, raw_text=loaded.raw_text)


IDENTITY_FILE = "control-run.json"


def run_identity(loaded: "LoadedSuite", llm: str) -> dict[str, Any]:
    """What a control run's records depend on beyond its units: the controls' version, the model,
    the dataset (spec and file content) and the knowledge base spec."""
    c, config = loaded.suite.controls, controls_configuration(loaded.suite)
    source = Path(loaded.dataset_source(c.dataset))
    content = hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else ""
    return {
        "control_version": VERSION,
        "model": control_model_id(llm),
        "dataset": c.dataset.model_dump(mode="json"),
        "dataset_sha256": content,
        "knowledge_base": c.knowledge_base.model_dump(mode="json") if c.knowledge_base else None,
        "configuration": {
            "systems": [s.model_dump(mode="json") for s in config.systems],
            "interventions": [i.model_dump(mode="json") for i in config.interventions],
            "exclusion": config.exclusion.model_dump(mode="json"),
            "seed": loaded.suite.seed,
        },
    }


def start_or_resume(run_dir: Path, identity: dict[str, Any]) -> Path:
    """A control run of the same identity resumes; one made by another version of the controls or
    from another dataset starts over (its records would answer other questions or another control)."""
    from ..run_store import RunStore

    marker = run_dir / IDENTITY_FILE
    if run_dir.exists() and (not marker.is_file() or json.loads(marker.read_text(encoding="utf-8")) != identity):
        with RunStore(run_dir).lock():  # refused while another process runs it
            pass
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(identity, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return run_dir


def _kb_llm(controls_dir: Path) -> Any:
    """The controls' KB builder LLM: the schema-following test LLM (offline, deterministic), so
    every control run reuses one KB whatever its own model."""
    from ..llm import LLMClient
    from ..llm.offline import SchemaFollowingBackend

    return LLMClient(SchemaFollowingBackend(), cache_dir=controls_dir / "kb-llm-cache", max_attempts=1)


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "control"
