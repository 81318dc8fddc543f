"""Options several ``provbench`` commands share: ``--plugin`` (the user's own plugin files),
``--out`` (a file or directory to write), and the ``--model`` help that lists every kind of model id."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click


def _load_plugins(ctx: click.Context, param: click.Parameter, specs: tuple[str, ...]) -> None:
    """``--plugin``: the user's own plugin files or modules join the process's plugins at once."""
    from .errors import UserError
    from .local_plugins import add_command_line_plugins

    try:
        add_command_line_plugins(specs)
    except UserError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


PLUGIN_OPTION = click.option(
    "--plugin",
    "plugins",
    multiple=True,
    expose_value=False,
    callback=_load_plugins,
    help="A plugin file (./my_system.py) or module (my_pkg.module) to load besides the "
    "installed ones; repeatable (a suite can also list them under `plugins:`).",
)


def out_option(help: str | None = None, *, directory: bool = False, default: Path | None = None) -> Callable:
    """``--out``: where a command writes, a directory (``directory``) or a file, as a Path; a
    ``default`` is shown in the help."""
    kind = click.Path(file_okay=False, path_type=Path) if directory else click.Path(dir_okay=False, path_type=Path)
    shown: dict[str, Any] = {"show_default": True} if default is not None else {}
    return click.option("--out", type=kind, default=default, help=help, **shown)


MODEL_HELP = (
    "Override the suite's model: a litellm id (openai/gpt-4o-mini, deepseek/deepseek-chat); a local "
    "OpenAI-compatible server (vLLM, Ollama, llama_cpp.server) as openai/<name> with "
    "OPENAI_API_BASE=http://127.0.0.1:8000/v1; 'embedded' (the bundled GGUF model); "
    "llama-cpp:<name or file.gguf>; 'schema-following' (offline: answers every request with an instance "
    "of its schema, no model); control:<behaviour> (a known-truth control LLM, docs/controls.md); or "
    "a plugin backend's prefix:name."
)
