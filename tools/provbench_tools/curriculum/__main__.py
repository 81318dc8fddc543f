"""``python -m provbench_tools.curriculum``: rewrite curriculum-mini."""

from . import main

main()
