"""`dagmca judge-check`: the judge an eval would use, on trial before an eval trusts it.

A battery of pairs whose right verdict is known, each read by the judge with the eval's
own pair prompt, in both orders: whether its verdict holds when the order is swapped
(`position`), whether it prefers an answer restated at twice the length with nothing
added (`length`), whether it picks the right answer over a near miss against a
reference (`reference`), and, with a second model, whether it prefers its own model's
answers over another's of equal correctness (`self_preference`). Each measure comes
with its interval over the pairs and a status against the thresholds the Evaluate
guide states, and the check is stored as a `JudgeCheck` node that every eval of that
judge reads.

The package's namespace is the light part (the models and the thresholds); running a
check is `dagmca.evaluation.judgecheck.running`."""

from dagmca.evaluation.judgecheck.models import Check, CheckName, CheckStatus, JudgeCheckReport

__all__ = ["Check", "CheckName", "CheckStatus", "JudgeCheckReport"]
