"""A generated report in real headless Chromium: tables, charts and a question page render, and
markup planted in a question, an answer and a tool result executes nothing; the Questions table's
filters, search and sorting work with scripts on, and everything reads with scripts off."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


from runner_helpers import run_toy, write_toy_suite

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    playwright_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    return run_toy(write_toy_suite(folder / "suite", kb=True), folder / "run")


def open_page(browser, path: Path, scripts: bool = True):
    page = browser.new_page(viewport={"width": 1280, "height": 900}, java_script_enabled=scripts)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, dialogs


def assert_nothing_ran(page, dialogs) -> None:
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.title() != "pwned"
    assert dialogs == []


def test_report_renders_and_runs_no_payload(browser, run_dir, artifacts_dir):
    page, dialogs = open_page(browser, run_dir / "report.html")
    assert page.locator("table.table1 tbody tr").count() == 2
    assert page.locator("table.table2 tr.group").count() >= 2
    assert page.locator("figure svg").count() >= 2
    box = page.locator("figure svg").first.bounding_box()
    assert box and box["width"] > 200 and box["height"] > 100  # the chart is drawn, not an empty box
    link = page.locator("table.questions a", has_text="Who directed <script>").first
    assert link.count() == 1  # the payload is shown as text
    page.screenshot(path=str(artifacts_dir / "report.png"), full_page=True)
    assert_nothing_ran(page, dialogs)

    # the question's page is embedded: hidden until its link targets it, then shown in place
    target = page.locator("section.qpage").filter(has_text="Who directed <script>")
    assert target.count() == 1 and not target.is_visible()
    link.click()
    assert "#q-" in page.url and target.is_visible()
    assert "<script>" in target.locator("h1").inner_text()
    assert target.locator("text=<img src=x onerror=").count() >= 1
    assert page.locator("section.qpage:visible").count() == 1
    page.screenshot(path=str(artifacts_dir / "report-embedded-question.png"), full_page=False)
    mark = page.locator("table.questions td.tight a").first  # a record's system targets its section
    mark.click()
    system_id = mark.get_attribute("href").removeprefix("#")
    assert page.locator(f"section.system[id='{system_id}']").is_visible()
    assert page.locator("section.qpage:visible").count() == 1
    assert_nothing_ran(page, dialogs)
    page.close()


def test_question_page_shows_trace_and_subgraph(browser, run_dir, artifacts_dir):
    q1 = next((run_dir / "pages").glob("q1-*.html"))
    page, dialogs = open_page(browser, q1)
    section = page.locator("section#toy-graph")
    baseline_steps = section.locator("table.steps").first
    assert baseline_steps.is_visible() and baseline_steps.locator("tbody tr").count() == 4  # 3 get_entity + answer
    picture = section.locator("figure.subgraph svg").first  # the baseline's (interventions' sit in details)
    assert picture.is_visible() and picture.bounding_box()["height"] > 100
    assert "Orin Vale" in picture.text_content()
    details = section.locator("details", has=page.locator("summary", has_text="toy-hide-cited #0"))
    details.locator("summary").first.click()  # what the ablation hid is in its details
    assert details.get_by_text("entities (1): ent:orin-vale").is_visible()
    page.screenshot(path=str(artifacts_dir / "report-question.png"), full_page=True)
    assert_nothing_ran(page, dialogs)
    page.close()
    shutil.copy(q1, artifacts_dir / "report-question.html")


def visible_rows(page) -> list[dict]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('#records tbody tr'))
        .filter(row => !row.hidden).map(row => ({system: row.dataset.system, condition: row.dataset.condition,
        flags: row.dataset.flags, question: row.cells[0].textContent.trim()}))""")


def test_questions_filter_search_and_sort(browser, run_dir, artifacts_dir):
    page, dialogs = open_page(browser, run_dir / "report.html")
    form = page.locator("form#explore")
    assert form.is_visible()  # the script ran: the policy admits it by its hash
    total = page.locator("#records tbody tr").count()
    assert page.locator("#explore-count").text_content() == f"{total} of {total} records"
    form.locator("select[name=system]").select_option("toy-graph")
    form.locator("select[name=condition]").select_option("toy-hide-random")
    rows = visible_rows(page)
    assert rows and all(r["system"] == "toy-graph" and r["condition"] == "toy-hide-random" for r in rows)
    form.locator("select[name=condition]").select_option("")
    form.locator("select[name=state]").select_option("failed")
    failed = visible_rows(page)
    assert failed and all("failed" in r["flags"].split() for r in failed)
    assert {r["question"] for r in failed} >= {"Which river flows through Dunmere?"}
    form.locator("select[name=state]").select_option("")
    form.locator("input[name=q]").fill("DUNMERE?")  # case and punctuation do not matter
    found = visible_rows(page)
    assert found and all("Dunmere" in r["question"] for r in found)
    assert page.locator("#explore-count").text_content() == f"{len(found)} of {total} records"
    header = page.locator("#records thead th", has_text="Question")
    header.click()
    ordered = [r["question"] for r in visible_rows(page)]
    assert ordered == sorted(ordered, key=str.lower) and header.get_attribute("aria-sort") == "ascending"
    header.click()
    assert [r["question"] for r in visible_rows(page)] == sorted(ordered, key=str.lower, reverse=True)
    page.screenshot(path=str(artifacts_dir / "report-filtered.png"), full_page=False)
    form.locator("button[type=reset]").click()
    page.wait_for_function(f"document.getElementById('explore-count').textContent === '{total} of {total} records'")
    assert_nothing_ran(page, dialogs)
    page.close()


def test_the_report_reads_with_scripts_off(browser, run_dir, artifacts_dir):
    page, dialogs = open_page(browser, run_dir / "report.html", scripts=False)
    assert not page.locator("form#explore").is_visible()  # no dead controls
    rows = page.locator("#records tbody tr")
    assert rows.count() == len(visible_rows_static(run_dir)) and rows.nth(rows.count() - 1).is_visible()
    link = page.locator("table.questions a", has_text="Who is the mayor of Dunmere?").first
    link.click()  # question pages still open in place, by CSS alone
    assert page.locator("section.qpage:visible").count() == 1
    assert page.locator("h2#knowledge-base").is_visible() and page.locator("table.kb-build").is_visible()
    page.screenshot(path=str(artifacts_dir / "report-no-scripts.png"), full_page=False)
    page.close()


def visible_rows_static(run_dir: Path) -> list[str]:
    from provbench.run_store import RunStore

    return list(RunStore(run_dir).load_records())


def test_a_script_the_policy_does_not_name_is_blocked(browser, run_dir, tmp_path):
    text = (run_dir / "report.html").read_text(encoding="utf-8")
    tampered = tmp_path / "report.html"
    tampered.write_text(
        text.replace("form.hidden = false;", "form.hidden = false; window.__pwned = 9;"), encoding="utf-8"
    )
    page, dialogs = open_page(browser, tampered)
    assert not page.locator("form#explore").is_visible()  # its hash no longer matches: it never ran
    assert_nothing_ran(page, dialogs)
    page.close()


def test_notes_under_numbers_stay_in_their_cells(browser, run_dir, tmp_path, artifacts_dir):
    """A long note under a number (the Faithfulness table's "no records under ...") wraps inside its
    own cell instead of running over the next one."""
    import json

    from runner_helpers import builtin_plugin_manager

    from provbench.report import write_report

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    metrics = json.loads((copy / "metrics.json").read_text())
    note = (
        "no toy-graph records under: toy-hide-cited, toy-hide-random (not in the suite, or not applied to this system)"
    )
    metrics["values"] += [
        {
            "metric": "provenance.citation_necessity",
            "system": "toy-graph",
            "condition": "toy-hide-cited",
            "value": None,
            "note": note,
        },
        {
            "metric": "provenance.citation_necessity",
            "system": "toy-plain",
            "condition": "toy-hide-cited",
            "value": 0.5,
            "numerator": 1,
            "denominator": 2,
            "note": note,
        },
    ]
    (copy / "metrics.json").write_text(json.dumps(metrics))
    write_report(copy, builtin_plugin_manager())
    page, dialogs = open_page(browser, copy / "report.html")
    page.set_viewport_size({"width": 760, "height": 900})  # a narrow window: the columns cannot widen
    notes = page.locator("table.faithfulness td.num .note")
    assert notes.count() >= 2
    for i in range(notes.count()):  # the text's own extent (a range), not the block's box
        text = notes.nth(i).evaluate("""n => { const r = document.createRange(); r.selectNodeContents(n);
            const b = r.getBoundingClientRect(); return {left: b.left, right: b.right}; }""")
        cell = notes.nth(i).evaluate(
            "n => { const b = n.closest('td').getBoundingClientRect(); return {left: b.left, right: b.right}; }"
        )
        assert cell["left"] - 1 <= text["left"] and text["right"] <= cell["right"] + 1, (text, cell)
    page.locator("table.faithfulness").screenshot(path=str(artifacts_dir / "report-faithfulness.png"))
    page.close()


def test_the_report_tables_fit_a_laptop_window(browser, run_dir):
    """At 1280 px every table of the report stays inside the page's column: a wide one (Table 1,
    eleven columns; the Questions table) wraps its headers instead of pushing its last columns out."""
    page, dialogs = open_page(browser, run_dir / "report.html")
    spills = page.evaluate("""() => { const main = document.querySelector('main');
        const edge = main.getBoundingClientRect().right - parseFloat(getComputedStyle(main).paddingRight);
        return Array.from(main.querySelectorAll('table')).filter(t => t.offsetParent !== null)
            .map(t => [t.className, Math.round(t.getBoundingClientRect().right - edge)]).filter(t => t[1] > 1); }""")
    assert spills == []
    page.close()


LABELS_OUTSIDE = """svg => { const box = svg.getBoundingClientRect();
    return Array.from(svg.querySelectorAll('text')).map(t => [t.textContent, t.getBoundingClientRect()])
        .filter(([_, b]) => b.left < box.left - 0.5 || b.top < box.top - 0.5 || b.right > box.right + 0.5
                            || b.bottom > box.bottom + 0.5)
        .map(([text, b]) => `${text}: ${Math.round(b.left)}..${Math.round(b.right)} in ${Math.round(box.left)}..${Math.round(box.right)}`); }"""
SMALLEST_FONT_PX = """svg => { const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return Math.min(...Array.from(svg.querySelectorAll('text')).map(t => parseFloat(getComputedStyle(t).fontSize) * scale)); }"""


def errors_of(page) -> list[str]:
    found: list[str] = []
    page.on("console", lambda m: found.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: found.append(str(e)))
    return found


def assert_legible(svg) -> None:
    """Every label (names, relations, legend, ticks) inside the picture's box as Chromium lays it
    out (rotated ones by their rotated box), and no text under 10 px on screen."""
    assert svg.evaluate(LABELS_OUTSIDE) == []
    assert svg.evaluate(SMALLEST_FONT_PX) >= 10


def test_subgraph_pictures_are_legible_at_1280_px(browser, run_dir, artifacts_dir):
    q1 = next((run_dir / "pages").glob("q1-*.html"))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = errors_of(page)
    page.goto(q1.as_uri())
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    pictures = page.locator("figure.subgraph svg")
    assert pictures.count() >= 2  # the baseline's and an intervention's that hid an entity
    for i in range(pictures.count()):
        assert_legible(pictures.nth(i))
    assert page.locator("figure.subgraph svg text.relation").count() >= 3  # edges carry their relation
    hidden = page.locator("figure.subgraph svg", has=page.locator("path.cross")).first
    assert hidden.locator("g.legend text", has_text="hidden by this intervention").count() == 1
    pictures.first.screenshot(path=str(artifacts_dir / "subgraph.png"))
    assert errors == []
    page.close()


def test_long_names_at_the_edges_stay_inside_the_picture(browser, tmp_path, artifacts_dir):
    """The worst case for clipping: long names, wide letters and long relation labels on the
    layout's outermost nodes, each mark drawn; measured in Chromium, not by the estimate."""
    from provbench.report.subgraph import draw_subgraph

    names = [
        "Supercalifragilistic Ledger of the Eastern Shore",
        "W" * 27,
        "Ean Ledger",
        "Ωmega Çafé ünïcode",
        "mmmmmmmmmmmmmmmmmmmmmmmmmmmm",
    ]
    roles = [["cited", "gold"], ["visited"], ["neighbour", "hidden"], ["visited", "gold", "hidden"], ["neighbour"]]
    svg = draw_subgraph(
        {
            "nodes": [(f"n{i}", n, r) for i, (n, r) in enumerate(zip(names, roles))],
            "edges": [
                ("n0", "n1", "MMMMMMMMMMMMMMMMMMMMMMMMMMMM", ["gold"]),
                ("n1", "n0", "back", []),
                ("n1", "n2", "r", ["hidden"]),
                ("n3", "n4", "a long relation label here", []),
            ],
        }
    )
    page_file = tmp_path / "picture.html"
    page_file.write_text(
        f"<!doctype html><meta charset=utf-8><body style='margin:0;width:1280px'>{svg}</body>", encoding="utf-8"
    )
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = errors_of(page)
    page.goto(page_file.as_uri())
    assert_legible(page.locator("svg"))
    page.locator("svg").screenshot(path=str(artifacts_dir / "subgraph-long-names.png"))
    assert errors == []
    page.close()


def test_paper_charts_keep_their_labels_inside(browser, tmp_path, artifacts_dir):
    """Table 2's bars (with n/m), paper 001's position histogram and paper 002's accuracy per chain
    length, drawn from in-memory runs, measured in Chromium as the report shows them."""
    from test_p000_report import baseline_records, record, run_of
    from p001_helpers import grouped as p001_grouped
    from p001_helpers import four_node_path
    from test_report_charts import p002_run

    from provbench.model import LeakCheck
    from provbench.report.render import section_view
    from provbench_plugins.papers.p000_neighborhoods.report import table2_section
    from provbench_plugins.papers.p001_kgrag_ex import report as p001
    from provbench_plugins.papers.p002_planning import report as p002

    records = baseline_records() + [
        record("graphrag", q, condition=c) for c in ("cited-removal", "full-isolation") for q in ("q1", "q2")
    ]
    for unit in records[-2:]:
        unit.leak_check = LeakCheck(status="no-op")
    groups = p001_grouped(four_node_path(), ("node", 1, True, "C"), ("subpath", 0, True, "B"))
    sections = [
        table2_section(run_of(records, ["cited-removal", "full-isolation"])),
        p001.positions_section(groups, "kgrag-ex"),
        *p002.sections(p002_run()),
    ]
    svgs = [b["svg"] for s in sections for b in section_view(s)["blocks"] if b.get("svg")]
    assert len(svgs) == 4
    page_file = tmp_path / "charts.html"
    figures = "".join(f"<figure style='width:600px'>{svg}</figure>" for svg in svgs)
    page_file.write_text(
        f"<!doctype html><meta charset=utf-8><style>svg {{ width: 100%; height: auto; }}</style>"
        f"<body style='width:1280px'>{figures}</body>",
        encoding="utf-8",
    )
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = errors_of(page)
    page.goto(page_file.as_uri())
    charts = page.locator("figure svg")
    for i in range(charts.count()):
        assert charts.nth(i).evaluate(LABELS_OUTSIDE) == []
    page.screenshot(path=str(artifacts_dir / "paper-charts.png"), full_page=True)
    assert errors == []
    page.close()
