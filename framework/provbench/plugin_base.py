"""What every plugin kind shares: a name and validated options (:class:`Plugin`, :func:`parse_options`).

The kinds themselves (systems, interventions, metrics, ...) are in :mod:`provbench.plugin_api`;
this base lies below them so that claims (:mod:`provbench.results.claims`) and the kinds can
share it without the results depending on the plugin contracts.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import PluginError, UserError

OptionsT = TypeVar("OptionsT", bound=BaseModel)


def parse_options(
    model: type[OptionsT], options: dict[str, Any], owner: str, error: type[Exception] = UserError
) -> OptionsT:
    """A plugin's options validated by its pydantic ``model``; ``owner`` names the plugin in the
    error, e.g. "system 'rag'", which lists every bad option and the known ones."""
    try:
        return model(**options)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'options'}={e.get('input')!r}: {e['msg']}" for e in err.errors()
        )
        known = ", ".join(model.model_fields)
        raise error(f"{owner}: bad options: {problems} (known options: {known})") from None


class Plugin:
    """What every plugin kind shares: a ``name`` and, optionally, an ``Options`` pydantic model.

    A subclass that declares ``Options`` gets ``self.options`` (the validated model) from this
    ``__init__``; the registry validates a suite's options against the same model when it
    creates the plugin, so a bad option is reported once, naming kind, plugin and option.
    """

    name: str = ""
    kind: ClassVar[str] = "plugin"
    Options: ClassVar[type[BaseModel] | None] = None

    def __init__(self, **options: Any) -> None:
        owner = f"{self.kind} {self.name or type(self).__name__!r}"
        if self.Options is not None:
            self.options = parse_options(self.Options, options, owner, PluginError)
        elif options:
            raise PluginError(f"{owner}: bad options: takes no options, got {', '.join(sorted(options))}")
