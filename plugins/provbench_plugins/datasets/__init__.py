"""Dataset loaders, one sub-package per benchmark (loader, scoring, selection)."""
