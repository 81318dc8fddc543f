"""A knowledge-base directory loses only what provbench wrote (issue 33 items 4, 5, 11, 12):
foreign files are refused, a finished KB is never rebuilt without ``overwrite``, locks stay out of
the KB's parent folder, and a foreign or altered database beside a COMPLETE marker is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provbench.errors import UserError
from provbench.kb import KnowledgeBase
from provbench.kb.graphstore import KBError
from provbench.locks import kb_build_lock, kb_lock_path
from provbench.testing import build_tiny_kb
from provbench_plugins.kb_builders.concepts.builder import ConceptGraphBuilder


def concept_files(folder: Path) -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "concepts.csv").write_text("id,name\na,Alpha\nb,Beta\nc,Gamma\n")
    (folder / "edges.csv").write_text("source,relation,target\na,next,b\nb,next,c\n")
    return {"concepts": str(folder / "concepts.csv"), "edges": str(folder / "edges.csv"), "communities": False}


def build(kb_dir: Path, inputs: dict[str, str], **options) -> KnowledgeBase:
    return ConceptGraphBuilder(**inputs, **options).build([], kb_dir)


def entries(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_a_directory_with_a_users_files_and_a_graph_is_refused_and_left_alone(tmp_path):
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    (kb_dir / "graph.kuzu").write_bytes(b"the user's own database")
    (kb_dir / "notes.txt").write_text("months of work")
    before = entries(kb_dir)
    with pytest.raises(
        UserError,
        match=r"holds files provbench did not write \(graph.kuzu, notes.txt\); "
        r"refusing to delete anything",
    ):
        build(kb_dir, concept_files(tmp_path / "in"))
    assert entries(kb_dir) == before


def test_an_interrupted_build_loses_only_provbench_files_and_is_built_again(tmp_path):
    inputs = concept_files(tmp_path / "in")
    KnowledgeBase.create(tmp_path / "kb").close()  # killed before finalize
    kb = build(tmp_path / "kb", inputs)
    assert kb.complete and kb.stats().entities == 3
    kb.close()

    KnowledgeBase.create(tmp_path / "kb2").close()
    (tmp_path / "kb2" / "mine.txt").write_text("a user's file, added later")
    with pytest.raises(UserError, match=r"kb2: it holds no finished knowledge base .* \(mine.txt\)"):
        build(tmp_path / "kb2", inputs)
    assert (tmp_path / "kb2" / "mine.txt").read_text() == "a user's file, added later"
    assert (tmp_path / "kb2" / "graph.kuzu").exists()  # nothing deleted, provbench's files included


def test_a_finished_kb_of_another_builder_version_is_not_rebuilt_without_overwrite(tmp_path):
    inputs = concept_files(tmp_path / "in")
    kb_dir = tmp_path / "kb"
    build(kb_dir, inputs).close()
    info_path = kb_dir / "build_info.json"
    info = json.loads(info_path.read_text())
    current = info["inputs"]["builder"]
    info["inputs"].update(builder="concept-graph/v0", fingerprint="older")
    info_path.write_text(json.dumps(info))
    with pytest.raises(
        UserError, match=rf"built by concept-graph/v0, this is {current}; builder differ.*overwrite=true"
    ):
        build(kb_dir, inputs)
    assert (
        KnowledgeBase.is_complete(kb_dir)
        and json.loads(info_path.read_text())["inputs"]["builder"] == "concept-graph/v0"
    )

    (kb_dir / "keep.me").write_text("x")  # overwrite replaces provbench's files, never a user's
    with pytest.raises(UserError, match=r"holds files provbench did not write \(keep.me\)"):
        build(kb_dir, inputs, overwrite=True)
    (kb_dir / "keep.me").unlink()
    kb = build(kb_dir, inputs, overwrite=True)
    assert kb.build_info["inputs"]["builder"] == current
    kb.close()


def test_kb_locks_land_neither_beside_the_kb_nor_in_its_input_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PROVBENCH_LOCK_DIR", str(tmp_path / "locks"))
    inputs = concept_files(tmp_path / "in")
    kb_dir = tmp_path / "in" / "dev.json"  # a KB named like the dataset beside it: the old lock's place
    build(kb_dir, inputs).close()
    assert sorted(p.name for p in (tmp_path / "in").iterdir()) == ["concepts.csv", "dev.json", "edges.csv"]
    assert kb_lock_path(kb_dir).parent == tmp_path / "locks"
    with kb_build_lock(kb_dir, wait_s=0) as lock:
        assert lock.path.parent == tmp_path / "locks" and lock.path.exists()


def test_a_foreign_database_beside_a_complete_marker_is_refused(tmp_path):
    import kuzu

    build_tiny_kb(tmp_path / "kb").close()
    (tmp_path / "kb" / "graph.kuzu").unlink()
    foreign = kuzu.Database(str(tmp_path / "kb" / "graph.kuzu"))
    kuzu.Connection(foreign).execute("CREATE NODE TABLE Person(name STRING, PRIMARY KEY(name))")
    foreign.close()
    with pytest.raises(KBError, match=r"graph.kuzu is not a provbench knowledge base, or is damaged"):
        KnowledgeBase.open(tmp_path / "kb", read_only=True)


def test_a_kb_changed_after_its_build_is_refused_naming_the_counts(tmp_path):
    kb = build_tiny_kb(tmp_path / "kb")
    kb.store.rows("MATCH (e:Entity {id: 'ent:norland'}) DETACH DELETE e")
    kb.close()
    with pytest.raises(
        KBError,
        match=r"has changed since it was built: entities 9 \(built with 10\), "
        r"relations 11 \(built with 12\)",
    ):
        KnowledgeBase.open(tmp_path / "kb", read_only=True)


def test_a_build_killed_while_listing_its_files_is_built_again(tmp_path):
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    (kb_dir / ".provbench-files.json.tmp").write_text('["graph.ku')  # torn: the first thing create writes
    kb = build(kb_dir, concept_files(tmp_path / "in"))
    assert kb.complete and not (kb_dir / ".provbench-files.json.tmp").exists()
    kb.close()


def test_a_corrupt_database_beside_a_complete_marker_is_refused(tmp_path):
    build_tiny_kb(tmp_path / "kb").close()
    (tmp_path / "kb" / "graph.kuzu").write_bytes(b"\x00garbage" * 10_000)
    with pytest.raises(KBError, match=r"cannot open the knowledge base at .*kb: .*not a valid Kuzu database file"):
        KnowledgeBase.open(tmp_path / "kb", read_only=True)


def test_files_a_builder_claims_are_removed_with_the_kb(tmp_path):
    from provbench.kb.owned import remove_kb
    from provbench.kb.sources import write_sources

    KnowledgeBase.create(tmp_path / "kb").close()
    write_sources(
        tmp_path / "kb", {"tu:0": {"path": "/a.md", "file": "a.md", "document": "doc:0", "start": 0, "end": 1}}
    )
    remove_kb(tmp_path / "kb", "rebuilt")
    assert not (tmp_path / "kb").exists()
