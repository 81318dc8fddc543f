"""No secret in any artefact or console line (issue 33 items 1-3): canaries planted ten ways (the
environment, model parameters, headers, a URL's password and query token, provider errors in a
run and in a KB build, dataset text and options, a model's reply) are searched for in every file
the run and the KB build write, the report, the log and the console."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
from runner_helpers import QUESTIONS, toy_plugin_manager, toy_reply, write_toy_suite

from provbench import hookimpl, secrets
from provbench.cli import main
from provbench.errors import UserError
from provbench.kb import KnowledgeBase
from provbench.llm import LLMClient, ScriptedBackend
from provbench.plugin_api import KBBuilder
from provbench.runner import run_suite
from provbench.secrets import REDACTED, Redactor, redact
from provbench.testing.kb import TINY_ENTITIES, TINY_RELATIONS, TINY_TEXT_UNITS
from provbench_plugins.kb_builders.common.buildinfo import standard_info
from provbench_plugins.kb_builders.common.llm_calls import LLMTally

ENV = "envcanary-7f3a9c"  # 1 an environment variable named like a key
PARAM = "paramcanary-51d0e2"  # 2 model.params.api_key
HEADER = "headercanary-c94b17"  # 3 an Authorization header
URL_PASSWORD = "urlpasscanary-2be8"  # 4 the password of api_base's user:password@
URL_TOKEN = "querytokcanary-a61f"  # 5 an api_key query parameter of api_base
RUN_ERROR_KEY = "sk-runerrorcanary0123456789ab"  # 6 a key a provider's error quotes during a run
KB_ERROR_KEY = "sk-kberrorcanary0123456789abcd"  # 7 ... and during a KB build
DATASET_KEY = "sk-datasetcanary0123456789abc"  # 8 key-like text inside a question
OPTION = "optioncanary-0c55aa"  # 9 a dataset option named like a credential
REPLY_KEY = "ghp_replycanary0123456789ABCDEFGH"  # 10 key-like text in a model's reply
CANARIES = (ENV, PARAM, HEADER, URL_PASSWORD, URL_TOKEN, RUN_ERROR_KEY, KB_ERROR_KEY, DATASET_KEY, OPTION, REPLY_KEY)


class LeakyProviderKB(KBBuilder):
    """The tiny KB, built after one LLM call whose provider error quotes keys (as some do)."""

    name = "leaky-kb"

    def build(self, questions, kb_dir, llm, **options):
        if KnowledgeBase.is_complete(kb_dir):
            return KnowledgeBase.open(kb_dir)
        tally = LLMTally()
        tally.chat(llm, [{"role": "user", "content": "KB-BUILD extract"}], purpose="extraction")
        kb = KnowledgeBase.create(kb_dir)
        kb.add_text_units(TINY_TEXT_UNITS)
        kb.add_entities(TINY_ENTITIES)
        kb.add_relations(TINY_RELATIONS)
        kb.finalize(
            standard_info(
                builder=self.name,
                inputs={},
                model=llm.model_id,
                options={},
                counts={"entities": len(TINY_ENTITIES)},
                llm=tally,
            )
        )
        return kb


class LeakyKBPlugin:
    @hookimpl
    def provbench_register_kb_builders(self):
        return {"leaky-kb": LeakyProviderKB}


def leaky_reply(messages):
    content = messages[-1]["content"]
    if "KB-BUILD" in content:
        raise PermissionError(f"401 key {KB_ERROR_KEY} rejected (sent {PARAM}, url pass {URL_PASSWORD})")
    if "LLM-FAIL" in content:
        logging.getLogger("provbench.test").warning("provider said: bad key %s / %s", RUN_ERROR_KEY, ENV)
        raise ConnectionError(f"401 invalid api key {RUN_ERROR_KEY} (env {ENV}, {PARAM}, {HEADER})")
    answer = toy_reply(messages)
    return f"{answer} (my key is {REPLY_KEY})" if "mayor" in content else answer


def leaky_suite(tmp_path: Path) -> Path:
    questions = [*QUESTIONS[:3], QUESTIONS[6]]
    questions[0] = {**questions[0], "question": f"Who directed Glass Harbor? token {DATASET_KEY}"}
    suite = write_toy_suite(tmp_path / "suite", questions=questions)
    text = (
        suite.read_text()
        .replace("builder: toy-tiny", "builder: leaky-kb")
        .replace(
            "  id: scripted\n",
            f"""  id: scripted
  params:
    api_key: {PARAM}
    extra_headers: {{Authorization: "Bearer {HEADER}"}}
    api_base: "http://user:{URL_PASSWORD}@proxy.example/v1?api_key={URL_TOKEN}"
""",
        )
    )
    suite.write_text(
        text.replace("  path: questions.json", f"  path: questions.json\n  options: {{auth_token: {OPTION}}}")
    )
    return suite


def files_holding(root: Path, secrets: tuple[str, ...]) -> list[str]:
    return [
        f"{p.relative_to(root)}: {s}"
        for p in root.rglob("*")
        if p.is_file()
        for s in secrets
        if s.encode() in p.read_bytes()
    ]


@pytest.fixture(autouse=True)
def forget_remembered_secrets(monkeypatch):
    """Each test starts with no suite secrets remembered by an earlier one."""
    monkeypatch.setattr(secrets, "_REMEMBERED", set())


def test_canaries_planted_ten_ways_reach_no_artefact_log_or_console(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("PROVBENCH_TEST_API_KEY", ENV)
    suite = leaky_suite(tmp_path)
    console = Console(record=True, width=300)
    llm = LLMClient(
        ScriptedBackend(replies=[leaky_reply] * 200), cache_dir=tmp_path / "run" / "cache", backoff_s=0, max_attempts=2
    )
    with caplog.at_level(logging.INFO):
        run = run_suite(suite, out=tmp_path / "run", pm=toy_plugin_manager(LeakyKBPlugin()), llm=llm, console=console)

    kb_dir = suite.parent / "kb"
    errors = json.loads((kb_dir / "build_info.json").read_text())["llm"]["errors"]
    assert errors and REDACTED in errors[0]  # the KB build's provider error, kept redacted
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert any(r["status"] == "failed" and REDACTED in r["error"] for r in records)
    assert any(f"(my key is {REDACTED})" in (r["trace"] or {}).get("answer", "") for r in records)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["suite"]["model"]["params"]["api_base"] == f"http://{REDACTED}@proxy.example/v1?api_key={REDACTED}"
    assert manifest["redacted_questions"] == ["q1"]  # said where it happens: manifest, console, report
    assert "1 question(s) hold text that looks like a credential (q1)" in console.export_text()
    assert "sent to the model as written" in (run / "report.html").read_text()

    cache = run / "cache"  # the replay store keeps the model's replies verbatim, and no credential
    in_cache = [f"{p.relative_to(run)}: {REPLY_KEY}" for p in cache.rglob("*") if REPLY_KEY.encode() in p.read_bytes()]
    assert in_cache and files_holding(run, CANARIES) == in_cache
    assert files_holding(kb_dir, CANARIES) == []
    shown = console.export_text() + caplog.text
    assert [s for s in CANARIES if s in shown] == []


def test_the_command_line_prints_no_secret_in_an_error_or_kb_info(tmp_path, monkeypatch):
    monkeypatch.setenv("PROVBENCH_TEST_API_KEY", ENV)
    suite = write_toy_suite(tmp_path / "suite", kb=False)
    suite.write_text(suite.read_text().replace("path: questions.json", f"path: missing-{ENV}-{DATASET_KEY}.json"))
    result = CliRunner().invoke(main, ["run", str(suite)])
    assert result.exit_code == 2 and "dataset file not found" in result.output
    assert ENV not in result.output and DATASET_KEY not in result.output and REDACTED in result.output

    kb_dir = tmp_path / "kb"  # a KB built before build errors were redacted: kb info redacts on the way out
    from provbench.testing import build_tiny_kb

    build_tiny_kb(kb_dir).close()
    info = json.loads((kb_dir / "build_info.json").read_text())
    info["llm"] = {"errors": [f"extraction: AuthenticationError: key {KB_ERROR_KEY} / {ENV} invalid"]}
    (kb_dir / "build_info.json").write_text(json.dumps(info))
    for args in (["kb", "info", str(kb_dir)], ["kb", "info", str(kb_dir), "--json"]):
        shown = CliRunner().invoke(main, args)
        assert shown.exit_code == 0 and KB_ERROR_KEY not in shown.output and ENV not in shown.output
        assert REDACTED in shown.output


def test_a_kb_build_that_fails_on_every_call_raises_a_redacted_error(monkeypatch):
    monkeypatch.setenv("PROVBENCH_TEST_API_KEY", ENV)
    llm = LLMClient(
        ScriptedBackend(replies=[ConnectionError(f"bad key {KB_ERROR_KEY} / {ENV}")] * 4), backoff_s=0, max_attempts=1
    )
    tally = LLMTally()
    assert tally.chat(llm, [{"role": "user", "content": "x"}], purpose="extraction") is None
    with pytest.raises(UserError) as raised:
        tally.raise_if_all_failed("leaky", llm.model_id)
    assert KB_ERROR_KEY not in str(raised.value) and ENV not in str(raised.value) and REDACTED in str(raised.value)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("http://alice:s3cret-pw@host:8080/v1", f"http://{REDACTED}@host:8080/v1"),
        (
            "postgres://u:p%40ss@db/x and https://h/v1?api_key=abc123&model=m",
            f"postgres://{REDACTED}@db/x and https://h/v1?api_key={REDACTED}&model=m",
        ),
        ("https://h/v1?token=abc&page=2#x", f"https://h/v1?token={REDACTED}&page=2#x"),
        ("https://github.com/o/r and user@example.org", "https://github.com/o/r and user@example.org"),
        ("https://h/search?q=sk&max_tokens=5", "https://h/search?q=sk&max_tokens=5"),
    ],
)
def test_url_credentials_are_redacted_and_other_urls_kept(text, expected):
    assert Redactor().text(text) == expected == redact(text)
    assert Redactor().data({"api_base": text}) == {"api_base": expected}


def test_every_command_redacts_its_log_lines(monkeypatch, caplog):
    import click

    from provbench.cli import ProvbenchGroup

    monkeypatch.setenv("PROVBENCH_TEST_API_KEY", ENV)

    @click.group(cls=ProvbenchGroup)
    def group() -> None:
        pass

    @group.command("build")
    def build() -> None:  # as a KB build outside a run logs a provider's retry
        logging.getLogger("provbench.llm").warning("retrying: 401 key %s at http://u:%s@h/v1", ENV, URL_PASSWORD)

    with caplog.at_level(logging.WARNING):
        assert CliRunner().invoke(group, ["build"]).exit_code == 0
    assert f"retrying: 401 key {REDACTED} at http://{REDACTED}@h/v1" in caplog.text


def test_kb_build_of_a_suite_redacts_the_suite_secrets_its_builder_was_not_given(tmp_path):
    from provbench.runner import build_suite_kb

    llm = LLMClient(ScriptedBackend(replies=[leaky_reply] * 10), backoff_s=0, max_attempts=1)  # knows no key
    kb_dir, _, _ = build_suite_kb(leaky_suite(tmp_path), pm=toy_plugin_manager(LeakyKBPlugin()), llm=llm)
    [error] = json.loads((kb_dir / "build_info.json").read_text())["llm"]["errors"]
    assert f"(sent {REDACTED}, url pass {REDACTED})" in error
