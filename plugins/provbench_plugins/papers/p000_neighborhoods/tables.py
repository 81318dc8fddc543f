"""What paper 000's Tables 1 and 2 call things: system and condition names, Table 1's order, the
columns each system has, and the notes on what the ablations hid (used by :mod:`.report`)."""

from __future__ import annotations

from statistics import fmean
from typing import Any

from provbench.results.data import RunData

SYSTEM_NAMES = ("llm-only", "rag", "graphrag", "agentic-graphrag", "agentic-visited-only", "agentic-evidence-first")
# Table 1's rows, top to bottom, and the names the paper's tables give the systems.
PAPER_ORDER = ("agentic-graphrag", "agentic-evidence-first", "agentic-visited-only", "graphrag", "rag", "llm-only")
DISPLAY_NAMES = {
    "agentic-graphrag": "Agentic GraphRAG",
    "agentic-evidence-first": "Evidence-first",
    "agentic-visited-only": "Visited-only",
    "graphrag": "GraphRAG",
    "rag": "RAG",
    "llm-only": "LLM",
}
# Table 2 names the one-shot graph baseline otherwise than Table 1 does.
TABLE2_NAMES = {**DISPLAY_NAMES, "graphrag": "Simple GraphRAG"}
# Which questions each of the paper's Table 1 figures is a share of (from the figures: 76.0 % is
# 19/25 and no share of 30; 56.7 % is 17/30 and no share of 25; 80.0 and 60.0 fit both, and
# Table 2's baseline row gives them over 25).
PAPER_DENOMINATORS = {
    "agentic-graphrag": "analysed: 76.0 % = 19/25",
    "agentic-evidence-first": "analysed: 80.0 % = 20/25 (Table 2)",
    "agentic-visited-only": "analysed: 72.0 % = 18/25",
    "graphrag": "analysed: 60.0 % = 15/25 (Table 2)",
    "rag": "all: 56.7 % = 17/30",
    "llm-only": "all: 16.7 % = 5/30",
}
# Paper 000's dataset: its Table 1 figures and the notes on 2WikiMultihopQA's aliases apply only to runs on it.
PAPER_LOADERS = ("2wiki",)
AGENTS = frozenset({"agentic-graphrag", "agentic-evidence-first", "agentic-visited-only"})
ALL_FOOTPRINT = ("retrieved_text_units", "cited_text_units", "visited_entities", "cited_entities")
# The footprint columns each system's design has (Table 1 shows "-" for the others, as the paper does).
FOOTPRINT_OF = {"llm-only": (), "rag": ("retrieved_text_units", "cited_text_units")}

CONDITION_TITLES = {
    "cited-removal": "Cited ablation",
    "random-removal": "Random ablation",
    "full-isolation": "Full isolation",
    "text-only-isolation": "Text-only isolation",
    "entity-removal": "Entity removal",
    "entity-text-mask": "Entity text mask",
}
ISOLATIONS = ("full-isolation", "text-only-isolation")
# What each isolation does besides the text rule they share (the interventions' docstrings).
ISOLATION_DESCRIPTIONS = {
    "full-isolation": "every entity but the baseline's cited ones is removed, with its text",
    "text-only-isolation": "no entity is removed; the non-cited entities' text is unreadable as under full "
    "isolation, their names, descriptions and the graph's structure stay visible; community reports: all "
    "kept (written from names and relations, which this condition keeps)",
}
SHARED_TEXT_READINGS = {
    "keep": "a cited entity's own text (its own paragraph) stays readable though it names non-cited entities, "
    "other entities' text naming a cited one is hidden (shared_text: keep; the paper's “can only read "
    "text units from cited entities”)",
    "hide": "a text unit linked to any non-cited entity is hidden, a cited entity's own included (shared_text: hide; "
    "the paper's “access to text units attached to non-cited entities is blocked”)",
}


def ablation_of(run: RunData, key: str) -> str | None:
    """Which of paper 000's ablations a condition key runs (its short name), whatever the suite
    labelled it; None for another plugin."""
    namespace, _, short = run.plugin_names("interventions").get(key, key).rpartition("/")
    return short if short in CONDITION_TITLES and namespace in ("", "p000") else None


def on_papers_dataset(run: RunData) -> bool:
    """Whether the run read paper 000's dataset (its suite's loader), so the paper's figures compare."""
    loader = str((run.suite.get("dataset") or {}).get("loader") or "")
    return loader.rsplit("/", 1)[-1] in PAPER_LOADERS


def title_of(run: RunData, key: str) -> str:
    """The paper's name for one of its ablations, followed by the suite's label when it has one."""
    short = ablation_of(run, key)
    if short is None:
        return key
    return CONDITION_TITLES[short] if key == short else f"{CONDITION_TITLES[short]} ({key})"


def paper_system(run: RunData, key: str) -> str | None:
    """Which of paper 000's systems a record key runs (its short name), or None for another plugin."""
    namespace, _, short = run.plugin_names("systems").get(key, key).rpartition("/")
    return short if short in DISPLAY_NAMES and namespace in ("", "p000") else None


def display_name(run: RunData, key: str, names: dict[str, str] = DISPLAY_NAMES) -> str:
    """The paper's name for one of its systems (``names``: Table 1's, or TABLE2_NAMES); a suite's own
    label (or another plugin) as written."""
    short = paper_system(run, key)
    return names[short] if short is not None and key == short else key


def table1_order(run: RunData) -> list[str]:
    """Paper 000's systems in its Table 1 order, then the run's other systems in suite order."""
    rank = {name: i for i, name in enumerate(PAPER_ORDER)}
    return sorted(run.systems, key=lambda s: rank.get(paper_system(run, s) or "", len(rank)))


def footprint_applies(run: RunData, key: str) -> tuple[str, ...]:
    short = paper_system(run, key)
    return FOOTPRINT_OF.get(short, ALL_FOOTPRINT) if short is not None else ALL_FOOTPRINT


def is_agent(run: RunData, key: str) -> bool:
    """A tool agent (forced and flagged answers apply): one of the paper's three, or a system whose
    records carry the agent loop's ``steps_used``."""
    short = paper_system(run, key)
    if short is not None:
        return short in AGENTS
    return any(r.trace is not None and "steps_used" in r.trace.artifacts for r in run.select(key))


def intervention_options(run: RunData, key: str) -> dict[str, Any]:
    for ref in run.suite.get("interventions", []):
        if isinstance(ref, dict) and (ref.get("label") or ref["name"].rsplit("/", 1)[-1]) == key:
            return dict(ref.get("options") or {})
    return {}


def caption_of_text_rules(run: RunData) -> str:
    """How the run's ablations treated text shared by cited and other entities, for Table 2's caption."""
    isolations = [c for c in run.conditions if ablation_of(run, c) in ISOLATIONS]
    parts = [
        f"{title_of(run, c)}: {ISOLATION_DESCRIPTIONS[ablation_of(run, c)]}; text rule: "
        f"{SHARED_TEXT_READINGS[option_of(run, c, 'shared_text')]}."
        for c in isolations
    ]
    parts.append(
        "Cited removal hides the cited entities' text units and the baseline's cited text units; random "
        "removal, entity removal and entity text mask keep the cited entities' text readable."
    )
    parts += [
        f"{title_of(run, c)}: {RANDOM_DRAWS[option_of(run, c, 'draw')]}." for c in _running(run, "random-removal")
    ]
    parts += [
        f"{title_of(run, c)}: {REMOVAL_TEXT[option_of(run, c, 'text')]}." for c in _running(run, "entity-removal")
    ]
    return " ".join(parts)


RANDOM_DRAWS = {
    "not-visited-first": "drawn from the plausibly retrievable entities the baseline did not visit, visited-but-uncited "
    "ones only when nothing else is left (draw: not-visited-first; the plan's notes give the share drawn on the "
    "trajectory)",
    "uniform": "drawn uniformly from the non-cited plausibly retrievable entities, visited-but-uncited ones included "
    "(draw: uniform; the paper's wording; the plan's notes give the share drawn on the trajectory)",
}
REMOVAL_TEXT = {
    "linked": "every text unit linked to a removed entity is hidden, so it hides all that entity text mask hides "
    "plus the entities, as section 2.3 designs the pair (text: linked); the paper's Table 2 has the mask costing "
    "more in 3 of 4 systems, which under this design only noise or metadata can give",
    "orphaned": "only the text units no kept entity links are hidden, so a unit shared with a kept neighbour stays "
    "readable and the mask may hide more text (text: orphaned; the reading under which the paper's Table 2 "
    "ordering can arise)",
}
DEFAULT_OPTIONS = {"shared_text": "keep", "draw": "not-visited-first", "text": "linked"}


def option_of(run: RunData, condition: str, option: str) -> str:
    """One of the run's options for a condition of paper 000, or its default."""
    return intervention_options(run, condition).get(option, DEFAULT_OPTIONS[option])


def _running(run: RunData, ablation: str) -> list[str]:
    return [c for c in run.conditions if ablation_of(run, c) == ablation]


def hidden_reports_note(run: RunData) -> Any:
    """The mean number of community reports each condition hid per unit (a report goes when any of
    its members is removed or masked, so at the paper's scale most removals hide most reports), and
    the mean number of cited reports it kept readable."""
    from provbench.report.sections import Text

    means = []
    for condition in run.conditions:
        summaries = [
            r.trace.artifacts["hidden_by_intervention"] or {}
            for r in run.records
            if r.key.condition == condition and r.trace is not None and "hidden_by_intervention" in r.trace.artifacts
        ]
        if summaries:
            hidden, kept = (
                fmean((s.get(name) or {}).get("count", 0) for s in summaries)
                for name in ("communities", "keep_communities")
            )
            means.append(f"{title_of(run, condition)} {hidden:.1f} (cited reports kept {kept:.1f})")
    if not means:
        return None
    return Text(
        text="Community reports hidden per unit (mean over the condition's units; a report is hidden when "
        "any of its member entities is removed or masked, unless the baseline cited it: every "
        "condition but cited removal keeps the cited reports): " + "; ".join(means) + "."
    )
