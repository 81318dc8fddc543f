"""Options several ``provbench`` commands share: ``--plugin`` (the user's own plugin files) and
the ``--model`` help that lists every kind of model id."""

from __future__ import annotations

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


MODEL_HELP = (
    "Override the suite's model: a litellm id (openai/gpt-4o-mini, deepseek/deepseek-chat); a local "
    "OpenAI-compatible server (vLLM, Ollama, llama_cpp.server) as openai/<name> with "
    "OPENAI_API_BASE=http://127.0.0.1:8000/v1; 'embedded' (the bundled GGUF model); "
    "llama-cpp:<name or file.gguf>; 'schema-following' (offline: answers every request with an instance "
    "of its schema, no model); control:<behaviour> (a known-truth control LLM, docs/controls.md); or "
    "a plugin backend's prefix:name."
)
