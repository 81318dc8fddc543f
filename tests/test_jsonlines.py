"""The one JSON-lines reader loaders and builders share: streamed, located errors, .gz."""

import gzip
import json

import pytest

from provbench.errors import UserError
from provbench.jsonlines import JsonLineError, read_json_lines


def write(path, lines):
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_records_come_with_their_line_numbers_blank_lines_skipped(tmp_path):
    path = write(tmp_path / "a.jsonl", [{"id": 1}, "", "   ", {"id": 2}])
    assert list(read_json_lines(path)) == [(1, {"id": 1}), (4, {"id": 2})]


@pytest.mark.parametrize(
    "bad, problem",
    [
        ("{oops", r"not valid JSON: Expecting property name enclosed in double quotes \(column 2\)"),
        ("[1, 2]", "expected a JSON object, got list"),
    ],
)
def test_a_bad_line_names_file_line_and_problem(tmp_path, bad, problem):
    path = write(tmp_path / "a.jsonl", [{"id": 1}, bad])
    with pytest.raises(JsonLineError, match=rf"a\.jsonl:2: {problem}") as err:
        list(read_json_lines(path))
    assert (err.value.path, err.value.line) == (path, 2) and isinstance(err.value, UserError)


def test_non_objects_pass_when_not_required(tmp_path):
    path = write(tmp_path / "a.jsonl", ["[1, 2]", "3"])
    assert list(read_json_lines(path, objects=False)) == [(1, [1, 2]), (2, 3)]


def test_reading_is_lazy_a_later_bad_line_does_not_stop_the_first_record(tmp_path):
    path = write(tmp_path / "a.jsonl", [{"id": 1}, "{broken"])
    records = read_json_lines(path)
    assert next(records) == (1, {"id": 1})  # streamed: the broken line 2 has not been read yet
    with pytest.raises(JsonLineError, match=":2: "):
        next(records)


def test_keep_skips_lines_without_parsing_them(tmp_path):
    path = write(tmp_path / "a.jsonl", [{"id": "x"}, '{"id": "skip", broken', {"id": "y"}])
    kept = list(read_json_lines(path, keep=lambda line: "skip" not in line))
    assert kept == [(1, {"id": "x"}), (3, {"id": "y"})]


def test_problems_are_collected_instead_of_raised(tmp_path):
    path = write(tmp_path / "a.jsonl", ["{bad", {"id": 1}, "7"])
    problems: list[str] = []
    assert list(read_json_lines(path, problems=problems)) == [(2, {"id": 1})]
    assert [p.split(": ")[0] for p in problems] == [f"{path}:1", f"{path}:3"]


def test_gzip_files_are_decompressed_as_they_are_read(tmp_path):
    path = tmp_path / "pages.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write('{"id": "A"}\n{"id": "B"}\n{bad\n')
    seen = []
    with pytest.raises(JsonLineError, match=r"pages\.jsonl\.gz:3: not valid JSON"):
        seen.extend(r["id"] for _, r in read_json_lines(path))
    assert seen == ["A", "B"]


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(UserError, match=r"none\.jsonl: no such file"):
        list(read_json_lines(tmp_path / "none.jsonl"))


def test_hub_splits_load_through_one_helper_with_clear_errors(monkeypatch):
    import sys
    import types

    from provbench_plugins.datasets.fever.claim_records import read_hub
    from provbench_plugins.datasets.hub import load_split

    calls = []

    def load_dataset(*args, split):
        calls.append((args, split))
        if args[0] == "gone/repo":
            raise FileNotFoundError("no such dataset")
        return [
            {"id": 1, "claim": "c", "label": "NOT ENOUGH INFO", "evidence_wiki_url": "", "evidence_sentence_id": -1}
        ]

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    assert [r.claim for r in read_hub("fever", "paper_dev")] == ["c"]
    assert calls == [(("fever", "v1.0"), "paper_dev")]  # FEVER's config is passed on
    with pytest.raises(UserError, match=r"could not load 'gone/repo' \(split 'dev'\) with datasets: no such dataset"):
        load_split("gone/repo", "dev")
    monkeypatch.setitem(sys.modules, "datasets", None)  # not installed
    with pytest.raises(UserError, match=r"pip install 'provbench\[hub\]'"):
        load_split("fever", "dev")
