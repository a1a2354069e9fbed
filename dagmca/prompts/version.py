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
# 2026-11-28.62: every prompt that shows another agent's answer carries the clause against
#   conformity (coordinators' and the root's observations, the strange loop, the vote and
#   ensemble prompts, the top-down synthesis); the root reads a question session's answers
#   as positions with their holders' reasons, not a count.
PROMPT_VERSION = "2026-11-28.62"
