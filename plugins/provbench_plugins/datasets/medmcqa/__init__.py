"""MedMCQA and MMLU-medical (MIRAGE) multiple-choice questions (:mod:`.loader`), and all 57 MMLU
subjects (:mod:`.mmlu`). This package is the plugin module: it registers the three loaders."""

from provbench import hookimpl

from .loader import MedMCQALoader, MMLUMedicalLoader
from .mmlu import MMLULoader


@hookimpl
def provbench_register_dataset_loaders():
    return {cls.name: cls for cls in (MedMCQALoader, MMLUMedicalLoader, MMLULoader)}
