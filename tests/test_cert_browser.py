"""The report says, in real headless Chromium, whether the numbers in it are certified (issue 32, a
new user's finding 4): "Not validated" before ``provbench validate``, "Certified with exceptions"
naming what no certified claim covers after it."""

from __future__ import annotations

import pytest

from provbench.report.render import write_report
from provbench.results.claims import Verdict
from provbench.results.validity import Validity, write_validity
from runner_helpers import run_toy, toy_plugin_manager, write_toy_suite
from test_report_browser import browser, open_page  # noqa: F401 - the module's Chromium fixture

pytestmark = pytest.mark.browser


def suite_validity_text(browser, run_dir) -> str:  # noqa: F811
    page, _ = open_page(browser, write_report(run_dir, toy_plugin_manager()))
    text = page.locator("body").inner_text()  # scripts on: what a reader sees
    page.close()
    return text


def test_the_report_says_not_validated_then_what_was_certified(browser, tmp_path):  # noqa: F811
    run_dir = run_toy(write_toy_suite(tmp_path / "suite"), tmp_path / "run")
    assert "Not validated" in suite_validity_text(browser, run_dir)
    verdict = Verdict(claim="c", control="oracle", expected="e", observed="o", passed=True)
    write_validity(
        Validity(suite_name="s", suite_sha256="", verdicts=[verdict], covers={"c": []}, suite_cells=["toy x hide"]),
        run_dir,
    )
    text = suite_validity_text(browser, run_dir)
    assert "Certified with exceptions" in text and "no certified claim covers toy x hide" in text
