"""What a claim is about: the contract its shams are derived from (docs/controls.md, "What a claim
is about").

A claim's :meth:`~provbench.controls.Claim.about` names the conditions it reads and which of them
some control must show an effect of (a *positive* expectation), its positive and negative control
LLMs, the systems whose settings it compares, and the explanations or rankings it reads through
:meth:`ControlRuns.credit`. ``provbench validate`` replaces each of them by a sham
(:mod:`provbench.controls.shams`) and checks the claim again: a claim that still passes has no
power against that sham. A condition with no positive expectation is *untested*: no sham of it
could make the claim fail. A *reference* condition is one the claim compares a tested condition
with (a contrast's same-size random removal, a gentler variant): by design no control must show
an effect of it, so it is reported as a reference, not as a gap.

:func:`default_about` reads a claim that declares nothing from its :meth:`~Claim.needs` and its
``expect`` option (the general claims' :class:`~provbench.controls.Expectation` list), so every
claim gets shams; a claim of a package's own declares more precisely by overriding ``about``.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Any

from ..model import BASELINE


@dataclass(frozen=True)
class ClaimAbout:
    """What a claim tests. Every name is a key of the controls' configuration (or a control LLM)."""

    conditions: tuple[str, ...] = ()
    positive_conditions: tuple[str, ...] = ()  # conditions some control must show an effect of
    reference_conditions: tuple[str, ...] = ()  # conditions a tested one is compared with (no effect of their own)
    positive_controls: tuple[str, ...] = ()  # controls that must show the claim's effect
    negative_controls: tuple[str, ...] = ()  # controls that must not
    settings: tuple[str, ...] = ()  # systems whose settings are compared: the first is the reference
    explanations: tuple[str, ...] = ()  # explanations or rankings read through ControlRuns.credit
    options: tuple[str, ...] = ()  # suite options the claim tests: "exclusion" (its sham: the step off)

    @property
    def untested(self) -> list[str]:
        """Conditions the claim names without any positive expectation on them, nor as a reference."""
        return [c for c in self.conditions if c not in self.positive_conditions + self.reference_conditions]


def default_about(claim: Any) -> ClaimAbout:
    """A claim's subject read from what it needs and its ``expect`` option: every condition it
    reads counts as positive when some control must show an effect (or no expectation is listed)."""
    needs = claim.needs()
    expect = getattr(getattr(claim, "options", None), "expect", None) or []
    positive = tuple(dict.fromkeys(e.control for e in expect if e.effect))
    negative = tuple(dict.fromkeys(e.control for e in expect if not e.effect and e.control not in positive))
    conditions = tuple(c for c in needs.conditions if c != BASELINE)
    return ClaimAbout(
        conditions=conditions,
        positive_conditions=conditions if positive or not expect else (),
        positive_controls=positive,
        negative_controls=negative,
        settings=tuple(needs.systems) if len(needs.systems) > 1 else (),
    )


def blind_credit(mode: str, what: str, candidates: list[str], credit: list[float]) -> list[float]:
    """A blind explanation's credit: all on the first candidate, on a random one (by a hash of
    the candidates, so it is reproducible), or the real credit shuffled."""
    if not candidates:
        return list(credit)
    rng = random.Random(hashlib.sha256("|".join([what, *candidates]).encode()).hexdigest())
    if mode == "shuffled":
        return rng.sample(list(credit), len(credit))
    chosen = 0 if mode == "first" else rng.randrange(len(candidates))
    return [1.0 if i == chosen else 0.0 for i in range(len(candidates))]
