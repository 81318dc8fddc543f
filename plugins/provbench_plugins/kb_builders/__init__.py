"""Knowledge-base builders: shared building blocks and one sub-package per source."""
