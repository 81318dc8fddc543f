"""The hand-written part of curriculum-mini: 36 concepts of LLM engineering, 45 edges (two of them
invalidated by a curriculum revision) and questions cm-01..cm-21, each with its gold chain.

Kept as they were written for the first curriculum-mini (tests and the dataset card cite them);
the generator (:mod:`.tracks`) adds the deep, too-deep, stale-edge and generated unanswerable
questions on invented tracks beside them. A question's ``chain`` lists the edges of its gold chain
in order, walked from ``chain_from``; ``hops`` is the answer's distance in edges from the nearest
concept the question names (tests/test_curriculum_mini.py derives it from the graph).
"""

from __future__ import annotations

RECORDED_AFTER_DAYS = 2  # the hand-written edges were recorded two days after they took effect

# id, name, kind, description, aliases
CONCEPTS = (
    ('transformer-architecture', 'Transformer Architecture', 'foundation',
     "The neural network design of stacked attention and feed-forward layers behind today's language models.", ('Transformer',)),
    ('attention-mechanism', 'Attention Mechanism', 'foundation',
     'How each token weighs every other token in its context when computing its representation.', ('self-attention',)),
    ('tokenization', 'Tokenization', 'foundation',
     'Splitting text into the sub-word units a language model reads and writes.', ()),
    ('embeddings', 'Embeddings', 'foundation',
     'Dense vectors that place texts with similar meaning close together.', ()),
    ('context-window', 'Context Window', 'concept',
     'The number of tokens a model can read at once.', ()),
    ('prompting-fundamentals', 'Prompting Fundamentals', 'foundation',
     'Writing instructions, examples and constraints so a model does what is asked.', ('prompting',)),
    ('few-shot-prompting', 'Few-Shot Prompting', 'technique',
     'Showing the model a handful of worked examples inside the prompt.', ()),
    ('chain-of-thought', 'Chain-of-Thought Prompting', 'technique',
     'Asking the model to reason step by step before answering.', ('CoT',)),
    ('structured-output', 'Structured Output', 'technique',
     'Constraining replies to a schema such as JSON so programs can parse them.', ('JSON mode',)),
    ('function-calling', 'Function Calling', 'technique',
     'Letting the model choose a function and fill in its arguments as structured output.', ('tool calling',)),
    ('tool-use', 'Tool Use', 'technique',
     'Running the functions a model calls and feeding their results back to it.', ()),
    ('agent-memory', 'Agent Memory', 'technique',
     'Storing and recalling what an agent saw in earlier steps or sessions.', ()),
    ('planning', 'Planning', 'technique',
     'Deciding a sequence of steps towards a goal before acting.', ()),
    ('agent-orchestration', 'Agent Orchestration', 'topic',
     "Coordinating an agent's loop of planning, tool calls and memory until a task is done.", ()),
    ('multi-agent-systems', 'Multi-Agent Systems', 'topic',
     'Several cooperating agents that divide a task among themselves.', ()),
    ('vector-search', 'Vector Search', 'technique',
     'Finding the stored items whose embeddings are nearest to a query embedding.', ('semantic search',)),
    ('chunking', 'Document Chunking', 'technique',
     'Splitting documents into passages small enough to retrieve and read.', ('chunking',)),
    ('reranking', 'Reranking', 'technique',
     'Reordering retrieved passages with a stronger relevance model.', ()),
    ('rag', 'Retrieval-Augmented Generation', 'topic',
     'Answering from passages retrieved at question time instead of from memory alone.', ('RAG',)),
    ('knowledge-graphs', 'Knowledge Graphs', 'foundation',
     'Entities joined by typed relations that programs can traverse.', ('knowledge graph',)),
    ('graph-traversal', 'Graph Traversal', 'technique',
     'Walking from node to node along edges to collect connected facts.', ()),
    ('community-detection', 'Community Detection', 'technique',
     'Grouping densely connected nodes of a graph into clusters.', ('Leiden clustering',)),
    ('graphrag', 'GraphRAG', 'topic',
     'Retrieval over a knowledge graph and its community summaries instead of flat passages.', ('graph RAG',)),
    ('agentic-graphrag', 'Agentic GraphRAG', 'topic',
     'An agent that explores a knowledge graph step by step and decides what to read next.', ()),
    ('fine-tuning', 'Fine-Tuning', 'technique',
     "Continuing to train a model's weights on task-specific examples.", ()),
    ('lora', 'Low-Rank Adaptation', 'technique',
     'Fine-tuning only small low-rank matrices added to a frozen model.', ('LoRA',)),
    ('rlhf', 'Reinforcement Learning from Human Feedback', 'technique',
     'Training a model towards the replies people prefer using a learned reward.', ('RLHF',)),
    ('evaluation-metrics', 'Evaluation Metrics', 'foundation',
     'Numbers such as accuracy and F1 that say how well a system does.', ()),
    ('llm-as-judge', 'LLM-as-a-Judge', 'technique',
     'Using a language model to grade the outputs of another model.', ()),
    ('calibration', 'Calibration', 'concept',
     "How well a model's stated confidence matches how often it is right.", ()),
    ('abstention', 'Abstention', 'technique',
     'Declining to answer when confidence is too low.', ()),
    ('hallucination', 'Hallucination', 'concept',
     'A fluent statement that the sources do not support.', ()),
    ('grounding', 'Grounding', 'concept',
     'Tying every claim of an answer to evidence that supports it.', ()),
    ('long-context-models', 'Long-Context Models', 'topic',
     'Models that read very long inputs in one pass.', ()),
    ('guardrails', 'Guardrails', 'technique',
     'Checks around a model that block unsafe inputs and outputs.', ()),
    ('prompt-injection', 'Prompt Injection', 'concept',
     "Instructions hidden in inputs that try to override the system's own.", ()),
)

# id, source, relation, target, valid_from, invalidated_at
EDGES = (
    ('1', 'transformer-architecture', 'prerequisite', 'prompting-fundamentals', '2024-01-01', None),
    ('2', 'attention-mechanism', 'part_of', 'transformer-architecture', '2024-01-01', None),
    ('3', 'tokenization', 'prerequisite', 'embeddings', '2024-01-01', None),
    ('4', 'few-shot-prompting', 'part_of', 'prompting-fundamentals', '2024-01-01', None),
    ('5', 'chain-of-thought', 'builds_on', 'prompting-fundamentals', '2024-01-01', None),
    ('6', 'structured-output', 'builds_on', 'prompting-fundamentals', '2024-01-01', None),
    ('7', 'function-calling', 'builds_on', 'structured-output', '2024-03-01', None),
    ('8', 'prompting-fundamentals', 'prerequisite', 'function-calling', '2024-03-01', None),
    ('9', 'prompting-fundamentals', 'prerequisite', 'agent-memory', '2024-03-01', None),
    ('10', 'function-calling', 'prerequisite', 'agent-orchestration', '2024-06-01', None),
    ('11', 'agent-memory', 'prerequisite', 'agent-orchestration', '2024-06-01', None),
    ('12', 'agent-memory', 'builds_on', 'vector-search', '2024-06-01', None),
    ('13', 'vector-search', 'builds_on', 'embeddings', '2024-01-01', None),
    ('14', 'tool-use', 'builds_on', 'function-calling', '2024-06-01', None),
    ('15', 'planning', 'part_of', 'agent-orchestration', '2024-06-01', None),
    ('16', 'planning', 'builds_on', 'chain-of-thought', '2024-06-01', None),
    ('17', 'multi-agent-systems', 'builds_on', 'agent-orchestration', '2025-01-01', None),
    ('18', 'rag', 'builds_on', 'vector-search', '2024-01-01', None),
    ('19', 'rag', 'builds_on', 'prompting-fundamentals', '2024-01-01', None),
    ('20', 'chunking', 'part_of', 'rag', '2024-01-01', None),
    ('21', 'reranking', 'part_of', 'rag', '2024-01-01', None),
    ('22', 'graphrag', 'builds_on', 'rag', '2024-09-01', None),
    ('23', 'graphrag', 'builds_on', 'knowledge-graphs', '2024-09-01', None),
    ('24', 'community-detection', 'part_of', 'graphrag', '2024-09-01', None),
    ('25', 'knowledge-graphs', 'prerequisite', 'graph-traversal', '2024-01-01', None),
    ('26', 'graph-traversal', 'part_of', 'agentic-graphrag', '2025-06-01', None),
    ('27', 'agentic-graphrag', 'builds_on', 'graphrag', '2025-06-01', None),
    ('28', 'agentic-graphrag', 'builds_on', 'agent-orchestration', '2025-06-01', None),
    ('29', 'agentic-graphrag', 'contrasts_with', 'graphrag', '2025-06-01', None),
    ('30', 'lora', 'part_of', 'fine-tuning', '2024-01-01', None),
    ('31', 'rlhf', 'builds_on', 'fine-tuning', '2024-01-01', None),
    ('32', 'fine-tuning', 'contrasts_with', 'rag', '2024-01-01', None),
    ('33', 'evaluation-metrics', 'prerequisite', 'calibration', '2024-01-01', None),
    ('34', 'llm-as-judge', 'builds_on', 'evaluation-metrics', '2024-06-01', None),
    ('35', 'llm-as-judge', 'builds_on', 'prompting-fundamentals', '2024-06-01', None),
    ('36', 'calibration', 'prerequisite', 'abstention', '2025-01-01', None),
    ('37', 'abstention', 'related', 'hallucination', '2025-01-01', None),
    ('38', 'hallucination', 'contrasts_with', 'grounding', '2024-01-01', None),
    ('39', 'rag', 'related', 'grounding', '2024-01-01', None),
    ('40', 'context-window', 'related', 'long-context-models', '2024-01-01', None),
    ('41', 'long-context-models', 'contrasts_with', 'rag', '2024-06-01', None),
    ('42', 'guardrails', 'related', 'prompt-injection', '2024-06-01', None),
    ('43', 'prompt-injection', 'related', 'tool-use', '2024-06-01', None),
    ('44', 'reranking', 'part_of', 'graphrag', '2024-09-01', '2025-03-01'),
    ('45', 'context-window', 'prerequisite', 'rag', '2024-01-01', '2025-03-01'),
)


def _q(qid: str, question: str, answer: str, hops: int, kind: str, chain_from: str, chain: list[str]) -> dict:
    return {"id": qid, "question": question, "answer": answer, "hops": hops, "type": kind,
            "chain_from": chain_from, "chain": chain}


def _unanswerable(qid: str, question: str) -> dict:
    return {"id": qid, "question": question, "answer": None, "answerable": False, "hops": 0, "type": "unanswerable"}


# In the order of the first curriculum-mini (1-hop, 2-hop, unanswerable, chain, ...).
ANSWERABLE = (
    _q("cm-01", "Which topic does Agentic GraphRAG contrast with?", "GraphRAG", 1, "contrast",
       "agentic-graphrag", ["29"]),
    _q("cm-09", "Function Calling builds on a technique; what does that technique build on?",
       "Prompting Fundamentals", 1, "chain", "function-calling", ["7", "6"]),
    _q("cm-14", "Planning is part of a topic; which prerequisite of that topic builds on Structured Output?",
       "Function Calling", 1, "chain", "planning", ["15", "10", "7"]),
    _q("cm-02", "Which technique is part of Fine-Tuning?", "Low-Rank Adaptation", 1, "part", "fine-tuning", ["30"]),
    _q("cm-10", "Agent Memory builds on a retrieval technique; what does that technique build on?", "Embeddings", 2,
       "chain", "agent-memory", ["12", "13"]),
    _q("cm-15", "Multi-Agent Systems builds on a topic; one prerequisite of that topic is Agent Memory. "
       "What does Agent Memory build on?", "Vector Search", 1, "chain", "multi-agent-systems", ["17", "11", "12"]),
    _q("cm-03", "What does Reinforcement Learning from Human Feedback build on?", "Fine-Tuning", 1, "builds-on",
       "rlhf", ["31"]),
    _q("cm-11", "GraphRAG builds on a retrieval topic; which part of that topic reorders retrieved passages?",
       "Reranking", 2, "chain", "graphrag", ["22", "21"]),
    _q("cm-16", "Community Detection is part of a topic that builds on Knowledge Graphs; which technique is "
       "Knowledge Graphs a prerequisite of?", "Graph Traversal", 1, "chain", "community-detection", ["24", "23", "25"]),
    _q("cm-04", "Which concept must a learner master before Abstention?", "Calibration", 1, "prerequisite",
       "abstention", ["36"]),
    _q("cm-12", "Attention Mechanism is part of an architecture; what is that architecture a prerequisite of?",
       "Prompting Fundamentals", 2, "chain", "attention-mechanism", ["2", "1"]),
    _q("cm-05", "Which part of Agent Orchestration is about deciding a sequence of steps before acting?", "Planning", 1,
       "part", "agent-orchestration", ["15"]),
    _q("cm-13", "Tool Use builds on a technique; which topic is that technique a prerequisite of?",
       "Agent Orchestration", 2, "chain", "tool-use", ["14", "10"]),
    _q("cm-06", "What does Vector Search build on?", "Embeddings", 1, "builds-on", "vector-search", ["13"]),
    _q("cm-07", "Which foundational architecture is a prerequisite of Prompting Fundamentals?",
       "Transformer Architecture", 1, "prerequisite", "prompting-fundamentals", ["1"]),
    _q("cm-08", "Which topic builds on Agent Orchestration by having several cooperating agents?",
       "Multi-Agent Systems", 1, "builds-on", "agent-orchestration", ["17"]),
)

UNANSWERABLE = (
    _unanswerable("cm-17", "Which concept is a prerequisite of Quantum Error Correction?"),
    _unanswerable("cm-18", "Who first proposed Agentic GraphRAG?"),
    _unanswerable("cm-19", "In which year was Low-Rank Adaptation introduced?"),
    _unanswerable("cm-20", "What does Guardrails build on?"),
    _unanswerable("cm-21", "Which concept is part of Long-Context Models?"),
)
