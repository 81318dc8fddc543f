"""The labelled medical knowledge graph of paper 001: see :mod:`.builder`."""
