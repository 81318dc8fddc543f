"""The knowledge base (Kùzu property graph + embedding indices) and the graph views systems read it through."""

from .graphstore import KBError, natural_key
from .knowledge_base import KnowledgeBase
from .types import Community, Entity, Hit, KBStats, Neighbor, Path, Relation, TextUnit
from .view import GraphView, ViewFilter

__all__ = [
    "KnowledgeBase",
    "GraphView",
    "ViewFilter",
    "KBError",
    "natural_key",
    "Entity",
    "Relation",
    "TextUnit",
    "Community",
    "Hit",
    "Neighbor",
    "Path",
    "KBStats",
]
