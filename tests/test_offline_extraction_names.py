"""The offline extraction (schema-following, as a dry run and the controls' KB build use it) makes
no entity of a function word or a format word: a new user's KB of package READMEs held entities
"text" and "this" (a sentence's first word, the extraction prompt's "Text:" label), and graphrag's
section heading "## Text units" then made every ablation of theirs look leaked."""

from __future__ import annotations

from cli_helpers import invoke_ok as invoke
from provbench.kb import KnowledgeBase
from provbench.llm.offline import content_words, stopwords

README = """# {name}

{name} is a Python package. This package is written by Jane {last}.
{name} is distributed under the MIT license.
Type {name} --help to see the options. Text files are read in UTF-8.

## Usage

This is how you use {name}: import it. The Type of a value is kept.
"""


def test_a_documents_kb_built_offline_names_no_function_or_format_word(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, last in (("Frozenlist", "Doe"), ("Aiosignal", "Roe"), ("Certifi", "Poe"), ("Distro", "Moe")):
        (docs / f"{name.lower()}.md").write_text(README.format(name=name, last=last))
    built = tmp_path / "kb"
    invoke("kb", "build", str(docs), "--builder", "documents", "--model", "schema-following", "--out", str(built))
    kb = KnowledgeBase.open(built)
    try:
        view = kb.view()
        names = {e.name.lower() for e in view.entities(list(view.entity_ids()))}
    finally:
        kb.close()
    assert names, "the extraction found nothing"
    junk = stopwords() | {"text", "type", "title", "use", "extract", "return"}  # the prompt's format words
    assert not [n for n in names if all(word in junk for word in n.split())], sorted(names)


def test_content_words_leave_out_stopwords_labels_and_the_system_texts_words():
    prompt = "Extract a graph. Use only names.\nTitle: Glass Harbor\nText: This film by Orin Vale. The End."
    words = content_words(prompt, fixed="Extract a graph. Use only names.")
    assert words == ["Glass Harbor", "Orin Vale", "The End"]  # a pair is a name ("The Hague")
