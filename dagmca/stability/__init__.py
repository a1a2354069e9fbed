"""Which findings hold: several sessions of one passage (samples: other seeds,
temperatures or models) aligned into findings — tensions, claims of the final answer and
answers that recur — each judged across the samples as the duplicate-question check
judges two stubs (an embedding prefilter, then the judge in both orders), with how many
of the samples reach it and the interval of that rate (`dagmca stability`, `run
--samples`).

`align` aligns sessions already run; `run_study` runs the samples first. Both are what
`dagmca.Workspace.stability` and `Workspace.run_samples` call."""

from dagmca.stability.align import AlignPlan, align
from dagmca.stability.models import FindingRow, SampleInfo, StabilityReport
from dagmca.stability.study import SamplePlan, run_study

__all__ = ["AlignPlan", "FindingRow", "SampleInfo", "SamplePlan", "StabilityReport", "align", "run_study"]
