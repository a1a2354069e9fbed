"""The version of dagmca's prompts as a whole: any change to a prompt's text that can
change an answer moves it, so that results made with other prompts are not read as
these prompts' (an eval's identity includes it)."""

from __future__ import annotations

# what each version changed (CHANGELOG.md says it for readers):
# 2026-11-27: the version kept with sessions and evaluations.
# 2026-11-27.50: evidence before the decision in every schema (the bundled model excepted);
#   observers see their debate's tensions, an anchored urgency scale, a meta lens on the
#   passage's subject; the final prompt labels its sections, names only those present,
#   gives contradictions both positions, asks for inline citations and marked inferences.
PROMPT_VERSION = "2026-11-27.50"
