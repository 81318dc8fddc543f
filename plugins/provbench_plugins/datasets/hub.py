"""One split of a Hugging Face hub dataset, for the loaders that accept a hub id (2Wiki, FEVER,
MedMCQA): the optional ``datasets`` package and the hub's many failures become one clear error."""

from __future__ import annotations

from typing import Any

from provbench.errors import UserError


def load_split(source: str, split: str, config: str | None = None) -> Any:
    """The rows of ``split`` (``config``: the dataset's configuration, if it has several)."""
    try:
        import datasets
    except ImportError:
        raise UserError(f"reading {source!r} from the Hugging Face hub needs: pip install 'provbench[hub]'") from None
    try:
        return datasets.load_dataset(*(source, config) if config else (source,), split=split)
    except Exception as exc:  # noqa: BLE001 - network, unknown split, config or repo: all the user's to fix
        raise UserError(f"could not load {source!r} (split {split!r}) with datasets: {exc}") from None
