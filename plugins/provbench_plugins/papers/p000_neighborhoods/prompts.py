"""Every prompt of paper 000's six systems, grouped per system.

Templates use ``str.format`` fields in braces. None of them names a dataset: the question,
the retrieved context and the tool list are the only things filled in.
"""

from __future__ import annotations

# -- shared -----------------------------------------------------------------------------------

QUESTION = "Question: {question}"
# appended to the user message only when a suite sets ask_confidence (paper 002's calibration)
CONFIDENCE = 'Also give "confidence": the probability, from 0 to 1, that your answer is right.'
CHOICES = "Options: {choices}"

# -- llm-only -----------------------------------------------------------------------------------

LLM_ONLY_SYSTEM = (
    "You answer questions from your own knowledge. Reply with a JSON object "
    '{"answer": "..."} whose answer is a short phrase (a name, date, place or yes/no), '
    "not a sentence."
)

# -- rag ----------------------------------------------------------------------------------------

# The context systems (rag, graphrag, the agents) share one stance on a missing answer: they
# answer from what they are given and none invites a guess from memory, so their accuracies
# compare retrieval, not how far a prompt licenses parametric knowledge (the llm-only baseline
# measures that).
RAG_SYSTEM = (
    "You answer questions using only the passages given to you. Each passage starts with its id "
    "in square brackets. Reply with a JSON object "
    '{"answer": "...", "cited_textunits": ["tu:..."]}: a short answer phrase, and the ids of the '
    "passages you used. Cite only ids that appear in the passages."
)
RAG_USER = "Passages:\n{passages}\n\n{question}"
RAG_PASSAGE = "[{id}] {text}"

# -- graphrag (one-shot) ------------------------------------------------------------------------

GRAPHRAG_SYSTEM = (
    "You answer questions using only the knowledge-graph context given to you: entities, "
    "relationships, text units and community reports, each with its id in square brackets. "
    "Reply with a JSON object "
    '{"answer": "...", "cited_entities": [...], "cited_relationships": [...], '
    '"cited_textunits": [...], "cited_communities": [...]}: a short answer phrase and the ids '
    "of the context items you used. Cite only ids that appear in the context."
)
GRAPHRAG_USER = "{context}\n\n{question}"
GRAPHRAG_SECTION = "## {title}\n{lines}"
GRAPHRAG_TITLES = ("Entities", "Relationships", "Text units", "Communities")  # its sections, in order
GRAPHRAG_ENTITY = "[{id}] {name} ({label}): {description}"
GRAPHRAG_RELATION = "[{id}] {source} -[{label}]-> {target}"
GRAPHRAG_TEXT_UNIT = "[{id}] {text}"
GRAPHRAG_COMMUNITY = "[{id}] {title}: {summary}"
GRAPHRAG_EMPTY = "(nothing was retrieved)"

# -- agentic GraphRAG and its variants ------------------------------------------------------------

AGENT_SYSTEM = (
    "You answer questions by exploring a knowledge graph with tools. Entities have ids like "
    "'ent:...', relationships 'rel:...', text units (source passages) 'tu:...' and communities "
    "'com:...'. Use only ids that tools have shown you.\n\n"
    "At every step reply with one JSON object: "
    '{{"thought": "<one short sentence>", "tool": "<tool name>", "arguments": {{...}}}}.\n\n'
    "Tools:\n{tools}\n\n"
    "Rules:\n{rules}"
)
AGENT_RULES = (
    "- Search first, then inspect entities, their neighbours and their text units.\n"
    "- Give a short answer phrase (a name, date, place or yes/no), not a sentence.\n"
    "- Cite the entities, relationships, text units and communities your answer relies on.\n"
    "- You have at most {max_steps} steps; call submit_answer before they run out."
)
AGENT_RULES_VISITED_ONLY = (
    "- You may cite an entity only after you have visited it: get_entity_details(entity) or "
    "get_neighbors(entity) visits it, and get_neighbors also visits the neighbours it lists. "
    "A submission citing an unvisited entity is rejected."
)
AGENT_RULES_EVIDENCE_FIRST = (
    "- Before answering you must call submit_evidence with the items you will cite. Evidence "
    "must exist and must have been seen: entities visited (get_entity_details or get_neighbors), "
    "relationships listed by get_neighbors, text units read, communities read.\n"
    "- Only after your evidence is accepted may you call submit_answer; the accepted evidence "
    "becomes your citations."
)
AGENT_TOOL_LINE = "- {name}({params}): {description}"

AGENT_TOOL_DESCRIPTIONS = {
    "search_entities": "find entities whose name or description matches the query",
    "get_entity_details": "an entity's name, type, description, text units and communities",
    "get_neighbors": "the relationships of an entity and the entities at their other end",
    "read_textunit": "the text of a source passage",
    "search_communities": "find community reports (summaries of groups of entities) matching the query",
    "read_community": "a community report: title, summary and some member entities",
    "submit_answer": "give the final answer with the ids you cite; this ends the run",
    "submit_evidence": "submit the ids you will cite, for validation before you answer",
}
# The evidence-first variant's submit_answer carries no citations: they come from the evidence.
AGENT_SUBMIT_ANSWER_AFTER_EVIDENCE = "give the final answer; your accepted evidence is cited; this ends the run"

AGENT_OBSERVATION = "Result of {tool}:\n{result}\n\n{budget}"
AGENT_ERROR = "Error from {tool}: {error}\n\n{budget}"
AGENT_REJECTION = "Rejected: {error}\n\n{budget}"
AGENT_BUDGET = "Steps left: {left}."
AGENT_LAST_STEP = "Steps left: 1. This is your last step: call {tools} now."
AGENT_NEXT_STEP_ONLY = "Steps left: {left}. Your next step must call {tools}."
AGENT_REPEATED_CALL = (
    "you already called {tool} with these arguments at step {step}; its result is above. "
    "Use another tool or other arguments, or submit your answer."
)
AGENT_NOT_OFFERED = "{tool} cannot be called now; call {tools}"
AGENT_EVIDENCE_ACCEPTED = "Evidence accepted: {items}. Now call submit_answer with your final answer."
AGENT_CITATIONS_REJECTED = "these citations failed: {problems}. Fix them and call {tool} again."
