"""provbench: evaluate what GraphRAG answers depend on."""

from .hookspecs import hookimpl

__version__ = "0.1.0"
__all__ = ["hookimpl", "__version__"]
