"""MedMCQA and MMLU-medical (MIRAGE) multiple-choice questions: see :mod:`.loader`."""
