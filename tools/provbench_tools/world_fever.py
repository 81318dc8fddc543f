"""A seeded generator of an invented world, written as FEVER claims and FEVER wiki-pages.

Why invented: no model can know a made-up musician's birthplace, so a label can only come from
the pages. The world: musicians (each born in a town, playing an instrument, founding a band in a
year), towns (in a region, with a river) and bands (formed in a year, by a founder). Page ids
follow FEVER (``_`` for spaces, ``-LRB-``/``-RRB-`` for a disambiguation such as "(band)"), and
``lines`` carries hyperlink anchors to the pages a sentence names.

Claims, the three labels in equal numbers:
  SUPPORTS  one sentence ("X was born in T."), or two sentences on two pages
            ("X was born in a town in region R." = X's birth sentence + T's region sentence);
  REFUTES   the same shapes with a wrong town, instrument, year or region;
  NOT ENOUGH INFO  a plausible fact the pages never state (evidence [[ann, null, null, null]]).

``python -m provbench_tools.world_fever OUT_DIR [--claims N] [--seed S]`` writes
``OUT_DIR/dev.jsonl`` and ``OUT_DIR/wiki-pages/wiki-001.jsonl``; with no options it rewrites
the bundled datasets/fever-mini.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

MINI_SEED, MINI_CLAIMS = 3, 36
SYLLABLES = ("ka", "lo", "mir", "ve", "tan", "sel", "dor", "ri", "nu", "bra", "ost", "el", "quin", "za", "hal")
INSTRUMENTS = ("cello", "harp", "oboe", "banjo", "accordion", "trumpet")
REGIONS = ("Northmere", "Vallonia", "Estreth", "Korrand")
RIVERS = ("Aldu", "Senn", "Marrow", "Tissel")
NEI_FACTS = (
    "{p} has a twin sister.",
    "{p} once owned a bakery.",
    "{p} is afraid of flying.",
    "{p} studied law before music.",
    "{p} speaks four languages.",
)


def _name(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts)).capitalize()


def page_id(title: str) -> str:
    return title.replace(" ", "_").replace("(", "-LRB-").replace(")", "-RRB-")


@dataclass
class WikiPage:
    title: str
    sentences: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)  # text, links

    def add(self, text: str, *links: str) -> int:
        self.sentences.append((text, [(title.split(" (")[0], title) for title in links]))
        return len(self.sentences) - 1

    def record(self) -> dict:
        lines = []
        for i, (text, links) in enumerate(self.sentences):
            lines.append("\t".join([str(i), text, *(part for pair in links for part in pair)]))
        return {"id": page_id(self.title), "text": " ".join(t for t, _ in self.sentences), "lines": "\n".join(lines)}


@dataclass
class World:
    pages: dict[str, WikiPage]
    facts: list[dict]  # one per musician: the sentence numbers of each fact


def make_world(rng: random.Random, musicians: int) -> World:
    pages: dict[str, WikiPage] = {}
    towns = []
    for i in range(max(4, musicians // 2)):
        town = f"{_name(rng, 2)} (town)"
        region, river = REGIONS[i % len(REGIONS)], rng.choice(RIVERS)
        page = pages[town] = WikiPage(town)
        region_line = page.add(f"{town.split(' (')[0]} is a town in the region of {region} .")
        page.add(f"It lies on the {river} river .")
        towns.append((town, region, region_line))
    facts = []
    for _ in range(musicians):
        person = f"{_name(rng, 2)} {_name(rng, 3)}"
        town, region, region_line = rng.choice(towns)
        band = f"The {_name(rng, 2)}s (band)"
        year, instrument = rng.randint(1961, 2015), rng.choice(INSTRUMENTS)
        page = pages[person] = WikiPage(person)
        page.add(f"{person} is a musician who plays the {instrument} .")
        born = page.add(f"{person} was born in {town.split(' (')[0]} .", town)
        page.add(f"{person.split()[0]} founded {band.split(' (')[0]} in {year} .", band)
        band_page = pages[band] = WikiPage(band)
        band_page.add(f"{band.split(' (')[0]} is a band formed in {year} .")
        band_page.add(f"It was founded by {person} .", person)
        facts.append(
            {
                "person": person,
                "town": town,
                "region": region,
                "region_line": region_line,
                "born_line": born,
                "instrument": instrument,
                "year": year,
            }
        )
    return World(pages, facts)


def _claim(claim_id: int, label: str, text: str, evidence: list[tuple[str, int]]) -> dict:
    if label == "NOT ENOUGH INFO":
        sets = [[[claim_id * 10, None, None, None]]]
    else:
        sets = [[[claim_id * 10, claim_id * 10 + i, page_id(title), line] for i, (title, line) in enumerate(evidence)]]
    return {
        "id": claim_id,
        "verifiable": "NOT VERIFIABLE" if label == "NOT ENOUGH INFO" else "VERIFIABLE",
        "label": label,
        "claim": text,
        "evidence": sets,
    }


def make_claims(rng: random.Random, world: World, count: int) -> list[dict]:
    claims, towns = [], [t for t in world.pages if t.endswith("(town)")]
    regions = sorted({f["region"] for f in world.facts} | set(REGIONS))
    for i in range(count):
        f = world.facts[i % len(world.facts)]
        p, label, two_pages = f["person"], ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")[i % 3], (i // 3) % 2 == 1
        cid = 100 + i
        if label == "NOT ENOUGH INFO":
            claims.append(_claim(cid, label, rng.choice(NEI_FACTS).format(p=p), []))
        elif two_pages:
            region = f["region"] if label == "SUPPORTS" else rng.choice([r for r in regions if r != f["region"]])
            claims.append(
                _claim(
                    cid,
                    label,
                    f"{p} was born in a town in the region of {region}.",
                    [(p, f["born_line"]), (f["town"], f["region_line"])],
                )
            )
        elif label == "SUPPORTS":
            claims.append(_claim(cid, label, f"{p} plays the {f['instrument']}.", [(p, 0)]))
        else:
            town = rng.choice([t for t in towns if t != f["town"]]).split(" (")[0]
            claims.append(_claim(cid, label, f"{p} was born in {town}.", [(p, f["born_line"])]))
    return claims


def write_world(out: Path, claims: int = MINI_CLAIMS, seed: int = MINI_SEED) -> Path:
    if claims < 3:
        raise ValueError("--claims must be at least 3 (one per label)")
    rng = random.Random(seed)
    world = make_world(rng, max(4, claims // 3))
    out.mkdir(parents=True, exist_ok=True)
    (out / "wiki-pages").mkdir(exist_ok=True)
    with (out / "wiki-pages" / "wiki-001.jsonl").open("w", encoding="utf-8") as handle:
        for title in sorted(world.pages):
            handle.write(json.dumps(world.pages[title].record(), ensure_ascii=False) + "\n")
    with (out / "dev.jsonl").open("w", encoding="utf-8") as handle:
        for claim in make_claims(rng, world, claims):
            handle.write(json.dumps(claim, ensure_ascii=False) + "\n")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m provbench_tools.world_fever",
        description="Write an invented world as FEVER claims and wiki-pages.",
    )
    parser.add_argument("out", type=Path, nargs="?", default=Path("datasets/fever-mini"))
    parser.add_argument("--claims", type=int, default=MINI_CLAIMS)
    parser.add_argument("--seed", type=int, default=MINI_SEED)
    args = parser.parse_args(argv)
    try:
        path = write_world(args.out, args.claims, args.seed)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"wrote {args.claims} claims and their pages to {path}")


if __name__ == "__main__":
    main()
