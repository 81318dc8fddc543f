"""Build step: the built-in suites and mini datasets (top-level suites/ and datasets/, the source
of truth) are copied into the wheel as provbench/bundled/{suites,datasets}, keeping their
relative layout so a suite's ``../datasets/...`` path still resolves when installed."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

BUNDLED = ("suites", "datasets")


class BuildPyWithBundled(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install reads the checkout's folders
            return
        root = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "provbench" / "bundled"
        for folder in BUNDLED:
            shutil.copytree(
                root / folder,
                target / folder,
                dirs_exist_ok=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            )


setup(cmdclass={"build_py": BuildPyWithBundled})
