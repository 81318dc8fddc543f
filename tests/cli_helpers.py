"""The command line as the tests call it: a wide terminal, and the run must succeed."""

from __future__ import annotations

from click.testing import CliRunner

from provbench.cli import main


def invoke_ok(*args: str) -> str:
    """``provbench ARGS``'s output; a non-zero exit fails the test with the output and exception."""
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output
