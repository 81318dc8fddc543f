"""The controls' registrations, on the public hooks: the ``control`` LLM backend (model ids
``control:<behaviour>``) and the two general claims (``condition-contrast``, ``condition-effect``)."""

from __future__ import annotations

from ..hookspecs import hookimpl
from .backend import PREFIX, make_control
from .contrasts import ConditionContrast, ConditionEffect


@hookimpl
def provbench_register_llm_backends():
    return {PREFIX: make_control}


@hookimpl
def provbench_register_claims():
    return {"condition-contrast": ConditionContrast, "condition-effect": ConditionEffect}
