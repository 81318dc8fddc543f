"""Concept-graph knowledge bases from plain files (plugin module: builder.py)."""
