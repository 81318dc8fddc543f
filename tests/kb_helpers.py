"""The tiny KB now lives in provbench.testing (public, for plugin authors); kept for old imports."""

from provbench.testing.kb import *  # noqa: F403 - re-exports the tiny KB's helpers
from provbench.testing.kb import FILM_MEMBERS, TINY_BUILD_INFO, TOWN_MEMBERS, build_tiny_kb  # noqa: F401
