"""The ``qa`` loader: questions from a plain file (JSONL, JSON, CSV, Parquet, the hub) with a field mapping."""
