"""Known-truth controls: LLMs with known behaviour, and claims checked against them.

A lab assay is trusted because it runs beside positive and negative controls. A provbench suite
does the same with ``provbench validate SUITE``: its ``controls:`` block names a dataset with
gold evidence (:mod:`provbench.gold`), a knowledge base, systems and interventions, and the
control LLMs that run them one by one, offline; each claim then says what each control's runs
must show (docs/controls.md).

* Control LLMs (:mod:`.behaviours`): model ids ``control:oracle``, ``control:uses-uncited``,
  ``control:parametric``, ``control:cites-everything``, ``control:ignores-context`` and
  ``control:random``, usable in any suite (``model: {id: control:oracle}``) or ``--model``. They
  read gold only from the run's questions (:meth:`ControlBackend.bind_questions`), never from
  the graph, so they see exactly what a system shows them.
* Claims (:mod:`provbench.results.claims`): a plugin kind registered with ``provbench_register_claims``;
  :class:`Claim` returns :class:`Verdict` rows from :class:`ControlRuns`. The general
  :class:`ConditionContrast` and :class:`ConditionEffect` (:mod:`.contrasts`) cover most claims;
  :class:`PairedClaim` is their verdict on a paired test, for claims of a package's own. A claim
  says what it is about (:class:`ClaimAbout`), and ``validate`` checks it again under shams of
  that (:mod:`.shams`): a claim that still passes has no power against them.
* Running them: :mod:`provbench.controls.validate` (imported on demand: it needs the runner).
"""

import sys

from ..results import claims, validity
from ..results.about import ClaimAbout, default_about
from ..results.claims import Claim, ClaimNeeds, ControlRuns, Verdict, unmeasured_over
from .backend import ControlBackend, control_model_id, make_control
from .behaviours import BEHAVIOURS, Behaviour
from .contrasts import ConditionContrast, ConditionEffect, Expectation, PairedClaim, default_expect

__all__ = [
    "ClaimAbout",
    "default_about",
    "ControlBackend",
    "control_model_id",
    "make_control",
    "BEHAVIOURS",
    "Behaviour",
    "Claim",
    "ClaimNeeds",
    "ControlRuns",
    "Verdict",
    "unmeasured_over",
    "ConditionContrast",
    "ConditionEffect",
    "Expectation",
    "PairedClaim",
    "default_expect",
]

# Deprecated paths: these modules moved to provbench.results (docs/architecture.md); the old
# names still import, as the very same modules.
sys.modules.update({f"{__name__}.{m.__name__.rpartition('.')[2]}": m for m in (claims, validity)})
