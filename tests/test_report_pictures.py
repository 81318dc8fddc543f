"""A question page's subgraph picture (provbench.report.subgraph) on the tiny knowledge base: what
it marks (visited, cited, gold, hidden by the intervention) each drawn in its own channel with a
legend, relation labels and arrows, names escaped, and every label inside the viewBox by the
drawing's own estimate (tests/test_report_browser.py measures them in Chromium)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from systems_helpers import systems_kb, view  # noqa: F401
from test_trajectory_steps import question

from provbench.kb.goldmap import map_gold
from provbench.model import RunRecord, Trace, UnitKey
from provbench.report import subgraph
from provbench.report.pictures import cached_picture, picture_key, record_marks

SVG = "{http://www.w3.org/2000/svg}"


def parsed(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def classes(root: ET.Element, tag: str) -> list[set[str]]:
    return [set(e.get("class", "").split()) for e in root.iter(f"{SVG}{tag}")]


def record(
    condition: str = "baseline", hidden: dict | None = None, visited=("ent:orin-vale",), cited=("ent:dunmere",)
) -> RunRecord:
    trace = Trace(
        question_id="q-born",
        system="s",
        answer="Norland",
        visited_entities=list(visited),
        citations={"entities": list(cited)},
        artifacts={"hidden_by_intervention": hidden or {}} if condition != "baseline" else {},
    )
    return RunRecord(key=UnitKey(question_id="q-born", system="s", condition=condition), status="ok", trace=trace)


def test_a_picture_marks_visited_cited_gold_and_hidden_each_its_own_way(view):  # noqa: F811
    gold = map_gold(view, question())
    hidden = {"entities": {"count": 1, "ids": ["ent:norland"]}}
    marks = subgraph.picture_marks(["ent:orin-vale"], ["ent:dunmere"], gold, hidden)
    data = subgraph.subgraph_data(view, marks)
    roles = {node: set(r) for node, _, r in data["nodes"]}
    assert roles["ent:orin-vale"] == {"visited", "gold"}
    assert roles["ent:dunmere"] == {"cited", "gold"}
    assert roles["ent:norland"] == {"neighbour", "gold", "hidden"}  # gold, hidden, never visited: all three show
    root = parsed(subgraph.draw_subgraph(data))
    circles = classes(root, "circle")
    assert {"node", "cited"} in circles and {"node", "visited"} in circles and {"gold-ring"} in circles
    assert {"node", "neighbour", "hidden"} in circles and {"cross"} in classes(root, "path")
    edges = [c for c in classes(root, "line") if "edge" in c]
    assert any("gold" in c for c in edges)  # the gold chain's relations are drawn as such
    relations = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "relation"]
    assert "born_in" in relations or "born in" in relations
    legend = [t.text for t in root.find(f"{SVG}g[@class='legend']").iter(f"{SVG}text")]
    assert legend == [text for _, text in subgraph.LEGEND]


def test_the_legend_names_only_what_is_drawn(view):  # noqa: F811
    root = parsed(subgraph.draw_subgraph(subgraph.subgraph_data(view, subgraph.picture_marks(["ent:orin-vale"]))))
    legend = [t.text for t in root.find(f"{SVG}g[@class='legend']").iter(f"{SVG}text")]
    assert legend == ["visited, not cited", "neighbour, never visited"]


def test_every_label_lies_inside_the_view_box():
    """Long names at the layout's extremes: each label's estimated extent stays in the viewBox."""
    names = ["Supercalifragilistic Ledger of the Eastern Shore", "W" * 26, "Ean Ledger", "x"]
    data = {
        "nodes": [(f"n{i}", name, ["visited"]) for i, name in enumerate(names)],
        "edges": [
            ("n0", "n1", "a relation with a very long label indeed", []),
            ("n1", "n2", "r", []),
            ("n2", "n3", "WWWWWWWWWWWWWWWWWWWWWWWW", []),
        ],
    }
    root = parsed(subgraph.draw_subgraph(data))
    left, top, width, height = map(float, root.get("viewBox").split())
    for text in root.iter(f"{SVG}text"):
        size = float(text.get("font-size") or 12)
        half = subgraph._text_width(text.text, size) / 2
        x = float(text.get("x")) + (half if text.get("text-anchor") != "middle" else 0)
        y = float(text.get("y"))
        assert left <= x - half and x + half <= left + width, (text.text, x, half, left, width)
        assert top <= y - size and y <= top + height, (text.text, y, top, height)


def test_names_and_relation_labels_are_escaped():
    data = {
        "nodes": [("a", "<script>alert(1)</script>", ["cited"]), ("b", 'B" onload="x', ["visited"])],
        "edges": [("a", "b", "<img src=x onerror=alert(1)>", [])],
    }
    svg = subgraph.draw_subgraph(data)
    assert not re.search(r"<(script|img)", svg) and "&lt;script&gt;" in svg
    assert parsed(svg).find(f".//{SVG}g[@class='nodes']") is not None  # still well-formed XML


def test_which_records_get_a_picture(view):  # noqa: F811
    assert record_marks(record(), question(), view)["gold_entities"]  # a baseline: with its question's gold
    assert record_marks(record(visited=(), cited=()), question(), view) is None  # nothing visited or cited
    text_only = {"text_units": {"count": 1, "ids": ["tu:3"]}}
    assert record_marks(record("drop-text", text_only), question(), view) is None  # nothing to mark in a graph
    entities = {"entities": {"count": 1, "ids": ["ent:dunmere"]}}
    assert record_marks(record("drop", entities), question(), view)["hidden_entities"] == ["ent:dunmere"]


def test_the_cache_tells_pictures_apart_by_every_mark(view, tmp_path):  # noqa: F811
    plain = subgraph.picture_marks(["ent:orin-vale"], ["ent:dunmere"])
    with_gold = subgraph.picture_marks(["ent:orin-vale"], ["ent:dunmere"], map_gold(view, question()))
    assert picture_key(plain) != picture_key(with_gold)
    first = cached_picture(tmp_path, view, plain)
    assert cached_picture(tmp_path, view, with_gold) != first and "gold-ring" in cached_picture(
        tmp_path, view, with_gold
    )
    assert cached_picture(tmp_path, view, plain, draw=lambda data: "not drawn again") == first


def test_pictures_drawn_ahead_are_the_ones_the_report_reads(view, tmp_path):  # noqa: F811
    """The run's background drawer (gold included, in its child process) leaves each picture under
    the key the report looks up: writing the report draws none again."""
    from provbench.report.pictures import PictureAhead, record_picture

    landed = [
        record(),
        record("drop", {"entities": {"count": 1, "ids": ["ent:dunmere"]}}),
        record("drop-text", {"text_units": {"count": 1, "ids": ["tu:3"]}}),
    ]
    ahead = PictureAhead(tmp_path, view, {"q-born": question()})
    for r in landed:
        ahead.record_landed(r)
    for pending in ahead._pending:  # close() cancels what has not started: the report would draw it
        pending.result()
    ahead.close()
    assert len(list((tmp_path / "pictures").glob("*.svg"))) == 2  # the text-only intervention gets none

    def never(data):
        raise AssertionError("drawn again")

    shown = [record_picture(tmp_path, view, r, question(), draw=never) for r in landed]
    assert "gold-ring" in shown[0] and "cross" in shown[1] and shown[2] is None
