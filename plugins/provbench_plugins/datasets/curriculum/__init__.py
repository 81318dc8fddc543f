"""Concept-graph question sets such as curriculum-mini (plugin module: loader.py)."""
