"""Built-in plugin: trajectories against gold evidence, and which step mattered.

* metric ``gold-trajectory`` (:mod:`.metric`): gold recall and precision of what a system retrieved,
  visited or read and cited; gold-path coverage; the first step with complete evidence; wasted steps;
  and, with the intervention below, the answers that depend on a single step;
* interventions ``leave-one-step-out`` and ``leave-one-step-out-replay`` (:mod:`.steps`);
* claims ``gold-path-followed`` and ``critical-steps-hold-gold`` (:mod:`.claims`) for known-truth controls;
* the report's "Trajectory against gold" section (:mod:`.report`); each question's page draws the
  trajectories against the gold chain (:mod:`provbench.report.gold_view`).
"""

from __future__ import annotations

from provbench import hookimpl


@hookimpl
def provbench_register_metrics():
    from .metric import GoldTrajectory

    return {GoldTrajectory.name: GoldTrajectory}


@hookimpl
def provbench_register_interventions():
    from .steps import LeaveOneStepOut, LeaveOneStepOutReplay

    return {cls.name: cls for cls in (LeaveOneStepOut, LeaveOneStepOutReplay)}


@hookimpl
def provbench_register_claims():
    from .known_truth import CLAIMS

    return {cls.name: cls for cls in CLAIMS}


@hookimpl
def provbench_report_sections(run):
    from .report import trajectory_section

    return trajectory_section(run)
