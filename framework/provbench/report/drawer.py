"""A child process that draws subgraph pictures for :class:`~provbench.report.pictures.PictureAhead`.

Drawing (the networkx layout, the SVG template) is pure Python and holds the GIL for tens of milliseconds
a picture; in the run's own process that delays every unit waiting to handle an LLM reply. Here
it runs beside the run on another core. One JSON document per line in (what
:func:`~provbench.report.subgraph.subgraph_data` returns), one JSON string (the SVG) or null out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from . import subgraph


class Drawer:
    """The child process, started on first use; ``draw`` is called from one thread at a time."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None

    def draw(self, data: dict[str, Any]) -> str | None:
        if self._proc is None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "provbench.report.drawer"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                encoding="utf-8",
            )
        self._proc.stdin.write(json.dumps(data) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the picture drawer stopped (exit code {self._proc.poll()})")
        return json.loads(line)

    def close(self) -> None:
        """Stop the child at once: every picture asked for has been read back, and waiting for its
        interpreter's teardown (matplotlib) would only delay the run."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc.stdin.close()
            self._proc.stdout.close()
            self._proc = None


def main() -> None:
    for line in sys.stdin:
        print(json.dumps(subgraph.draw_subgraph(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
