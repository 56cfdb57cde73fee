"""Settings for the whole suite."""

from __future__ import annotations

import os

from hypothesis import settings

# The suite is a gate: property tests draw the same examples on every run, so a run fails
# only on a change. CLEVERAGENTS_HYPOTHESIS=explore draws new examples (to hunt for bugs).
settings.register_profile("gate", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("CLEVERAGENTS_HYPOTHESIS", "gate"))
