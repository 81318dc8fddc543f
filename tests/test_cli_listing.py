"""Listings pipe: in a pipe or a file (CliRunner's output is not a terminal), every row is one plain,
tab-separated line with its fields whole; ``--json`` gives the same rows as JSON."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from provbench.cli import main
from provbench.registry import default_plugin_manager, default_registry, section_providers

REPO = Path(__file__).resolve().parents[1]


def registered():
    return default_registry().all() + section_providers(default_plugin_manager())


def test_plugins_in_a_pipe_are_whole_tab_separated_lines():
    result = CliRunner().invoke(main, ["plugins"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "# provbench plugins" and lines[1] == "kind\tname\tversion\tsource\tdescription"
    rows = [line.split("\t") for line in lines[2:]]
    assert len(rows) == len(registered()) and {len(row) for row in rows} == {5}
    longest = max(registered(), key=lambda reg: len(reg.description))
    assert len(longest.description) > 80 and [longest.kind, longest.name] in [row[:2] for row in rows]
    assert " ".join(longest.description.split()) in result.output  # whole, not cut to 80 columns


def test_plugins_as_json():
    result = CliRunner().invoke(main, ["plugins", "--json"])
    listed = json.loads(result.output)
    assert len(listed) == len(registered())
    assert set(listed[0]) == {"kind", "name", "version", "source", "description"}


def test_suites_and_data_info_pipe_too():
    suites = CliRunner().invoke(main, ["suites"])
    assert suites.output.splitlines()[1] == "name\tdescription\tfile"
    assert any(
        line.startswith("quickstart\t") and line.endswith("quickstart.yaml") for line in suites.output.splitlines()
    )
    assert {s["name"] for s in json.loads(CliRunner().invoke(main, ["suites", "--json"]).output)} >= {"quickstart"}

    dataset = str(REPO / "datasets" / "2wiki-mini" / "dev.json")
    info = CliRunner().invoke(main, ["data", "info", dataset])
    assert info.exit_code == 0 and "value\trecords" in info.output
    data = json.loads(CliRunner().invoke(main, ["data", "info", dataset, "--json"]).output)
    assert data["loader"] == "2wiki" and data["records"] == sum(data["facets"]["type"].values())
