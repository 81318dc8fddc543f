"""Generator of ``datasets/own-docs-mini/``: a user's own corpus as provbench's docs walk through it
(docs/own-data.md): ten short documents about an invented coastal province (Markdown, HTML, PDF
and one untitled plain-text file) and ``questions.csv``, ten questions with their supporting
documents (one and two hops; one yes-no), in the columns a user would write.

The world is invented so no model answers from memory. The PDF is written by a minimal PDF writer
of this module (one page, Helvetica, a title in its metadata), so the corpus needs no PDF library.

    python -m provbench_tools.own_docs --out datasets/own-docs-mini
"""

from __future__ import annotations

import argparse
import csv
import textwrap
from pathlib import Path

#: file name -> (title, paragraphs); the suffix decides the format
DOCUMENTS: dict[str, tuple[str, list[str]]] = {
    "halden-observatory.md": (
        "Halden Observatory",
        [
            "Halden Observatory is an astronomical observatory on the cliffs above Vell Harbor.",
            "Mira Castell founded Halden Observatory in 1921. The observatory houses the Castell Telescope.",
        ],
    ),
    "mira-castell.md": (
        "Mira Castell",
        [
            "Mira Castell was an astronomer. She was born in Brennmoor in 1889.",
            "Castell studied at the University of Tamsk before she moved to the coast.",
        ],
    ),
    "jonas-reeve.md": (
        "Jonas Reeve",
        [
            "Jonas Reeve was an optical engineer born in Vell Harbor.",
            "Reeve worked for Orlen Optical Works for thirty years.",
        ],
    ),
    "ada-lindqvist.md": (
        "Ada Lindqvist",
        [
            "Ada Lindqvist was an industrialist. She was born in Brennmoor in 1871.",
            "Lindqvist founded Orlen Optical Works in 1902.",
        ],
    ),
    "vell-harbor.html": (
        "Vell Harbor",
        [
            "Vell Harbor is a port town on the Lisk Coast.",
            "Vell Harbor lies in the province of Orlen. Its lighthouse dates from 1850.",
        ],
    ),
    "brennmoor.html": (
        "Brennmoor",
        ["Brennmoor is a mountain village in the Orlen Highlands.", "Brennmoor is known for its slate quarries."],
    ),
    "castell-telescope.html": (
        "Castell Telescope",
        [
            "The Castell Telescope is a refracting telescope at Halden Observatory.",
            "Jonas Reeve designed the Castell Telescope in 1934.",
        ],
    ),
    "university-of-tamsk.pdf": (
        "University of Tamsk",
        [
            "The University of Tamsk is a public university in the city of Tamsk.",
            "The University of Tamsk was founded in 1788.",
        ],
    ),
    "orlen-optical-works.pdf": (
        "Orlen Optical Works",
        ["Orlen Optical Works is a maker of lenses and telescopes.", "Orlen Optical Works is headquartered in Tamsk."],
    ),
    "field-notes.txt": (
        "",
        [
            "Notes from the survey season.",
            "The survey team met Ada Lindqvist at the Tamsk station. Mira Castell lent the team a star atlas.",
        ],
    ),
}

#: id, question, answer, supporting documents (file names, as a user's CSV would give them)
QUESTIONS = [
    ("q01", "Who founded Halden Observatory?", "Mira Castell", ["halden-observatory.md"]),
    (
        "q02",
        "Where was the founder of Halden Observatory born?",
        "Brennmoor",
        ["halden-observatory.md", "mira-castell.md"],
    ),
    ("q03", "Who designed the Castell Telescope?", "Jonas Reeve", ["castell-telescope.html"]),
    (
        "q04",
        "Which company did the designer of the Castell Telescope work for?",
        "Orlen Optical Works",
        ["castell-telescope.html", "jonas-reeve.md"],
    ),
    ("q05", "In which city is Orlen Optical Works headquartered?", "Tamsk", ["orlen-optical-works.pdf"]),
    ("q06", "Who founded the company Jonas Reeve worked for?", "Ada Lindqvist", ["jonas-reeve.md", "ada-lindqvist.md"]),
    (
        "q07",
        "Were Mira Castell and Ada Lindqvist born in the same village?",
        "yes",
        ["mira-castell.md", "ada-lindqvist.md"],
    ),
    ("q08", "In which year was the University of Tamsk founded?", "1788", ["university-of-tamsk.pdf"]),
    ("q09", "In which province is Vell Harbor?", "Orlen", ["vell-harbor.html"]),
    ("q10", "Where did Mira Castell study?", "University of Tamsk", ["mira-castell.md"]),
]


def markdown(title: str, paragraphs: list[str]) -> str:
    return f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n"


def html(title: str, paragraphs: list[str]) -> str:
    body = "\n".join(f"  <p>{p}</p>" for p in paragraphs)
    return (
        f"<!doctype html>\n<html><head><title>{title}</title><style>p {{ margin: 1em }}</style></head>\n"
        f"<body>\n  <h1>{title}</h1>\n{body}\n</body></html>\n"
    )


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def pdf(title: str, paragraphs: list[str]) -> bytes:
    """A one-page PDF: the paragraphs in Helvetica (lines wrapped, a blank line between), the title
    in the document information dictionary."""
    lines = [line for p in paragraphs for line in [*textwrap.wrap(p, 80), ""]]
    content = "BT /F1 11 Tf 72 720 Td 15 TL\n" + "".join(f"{_pdf_string(line)} Tj T*\n" for line in lines) + "ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        "/Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Length {len(content.encode('latin-1'))} >>\nstream\n{content}\nendstream",
        f"<< /Title {_pdf_string(title)} /Producer (provbench_tools.own_docs) >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def write(out: Path) -> Path:
    """Write the corpus (``docs/``) and ``questions.csv`` into ``out``; returns ``out``."""
    docs = out / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name, (title, paragraphs) in DOCUMENTS.items():
        path = docs / name
        if path.suffix == ".pdf":
            path.write_bytes(pdf(title, paragraphs))
        elif path.suffix == ".html":
            path.write_text(html(title, paragraphs), encoding="utf-8")
        elif path.suffix == ".md":
            path.write_text(markdown(title, paragraphs), encoding="utf-8")
        else:
            path.write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
    with (out / "questions.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["id", "question", "answer", "supporting_documents"])
        for qid, question, answer, supporting in QUESTIONS:
            writer.writerow([qid, question, answer, "|".join(supporting)])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("datasets/own-docs-mini"))
    print(write(parser.parse_args().out))


if __name__ == "__main__":
    main()
