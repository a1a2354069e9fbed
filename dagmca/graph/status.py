"""The statuses dagmca writes and compares, each a str enum whose values are the strings
it has always stored (a store written before reads the same), with the sets its code
asks about named once, by the question (a session's `ended`, `revisitable` and
`continuable`: methods, so that each is also the predicate of its set)."""

from __future__ import annotations

from enum import StrEnum

from dagmca.graph.schema import NodeRecord


class SessionStatus(StrEnum):
    """Where a session's run is: `running` while it runs (and after a kill, until it is
    resumed), then how it ended."""

    RUNNING = "running"
    DONE = "done"
    # it ran to the end, but a whole function failed (every flag, say): `problems` says which
    DEGRADED = "degraded"
    # it ran to the end with calls a budget refused: nothing more is asked until one is raised
    BUDGET_EXHAUSTED = "budget_exhausted"
    INTERRUPTED = "interrupted"  # stopped by the user (Ctrl-C)
    FAILED = "failed"  # stopped by an error (an endpoint down, say)

    @classmethod
    def of(cls, record: NodeRecord) -> SessionStatus:
        """A stored session's status. A record without one, or with one this version does
        not know, reads as `running`: not ended, which nothing takes as finished."""
        try:
            return cls(str(record.props.get("status")))
        except ValueError:
            return cls.RUNNING

    def ended(self) -> bool:
        """Its run went to its end (its final answer is made, or is not coming without a
        raised budget): a build links it, an evaluation and a study read it as it is,
        and the ledger traces it."""
        return self in _ENDED

    def revisitable(self) -> bool:
        """Its open stubs may be explored again with new context (`revisit`): its run
        ended and no budget cut its DAG short."""
        return self in _REVISITABLE

    def continuable(self) -> bool:
        """A run may take it up again (`resume`, or `run` given its id): anything but done."""
        return self is not SessionStatus.DONE


_ENDED = frozenset({SessionStatus.DONE, SessionStatus.DEGRADED, SessionStatus.BUDGET_EXHAUSTED})
_REVISITABLE = frozenset({SessionStatus.DONE, SessionStatus.DEGRADED})


class DebateStatus(StrEnum):
    """A debate's: `running` until its root resolves it (`done`) or it gives up (`failed`)."""

    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class RunStatus(StrEnum):
    """An evaluation's or a swarm's, kept on its node in the store: `running`, then
    `done`, or `budget_exhausted` for a swarm that left tasks unmade."""

    RUNNING = "running"
    DONE = "done"
    BUDGET_EXHAUSTED = "budget_exhausted"


class PassageStatus(StrEnum):
    """What became of one passage in a build (by this worker)."""

    WAITING = "waiting"
    RUNNING = "running"  # its session runs
    LINKING = "linking"  # its session ended; the store's earlier open stubs are judged against it
    DONE = "done"  # this worker ran and linked it
    FINISHED_EARLIER = "finished earlier"  # by an earlier build, or another worker meanwhile
    CLAIMED = "claimed by another worker"
    FAILED = "failed"
    SKIPPED = "skipped"  # its id is taken by a session of another text

    def finished(self) -> bool:
        """Its session ended and it was linked, by this build or before."""
        return self in (PassageStatus.DONE, PassageStatus.FINISHED_EARLIER)

    def active(self) -> bool:
        """This worker is at work on it."""
        return self in (PassageStatus.RUNNING, PassageStatus.LINKING)

    def pending(self) -> bool:
        """This build has yet to finish it: waiting, or at work."""
        return self is PassageStatus.WAITING or self.active()

    def unfinished(self) -> bool:
        """This build will not finish it: it failed, was skipped, or another worker has it."""
        return not (self.finished() or self.pending())


class AnswerStatus(StrEnum):
    """What `ask` made of a question."""

    ANSWERED = "answered"  # the model answered, citing nodes it was given
    # the model said the graph does not answer it, or no statement kept a checked citation
    UNSUPPORTED = "unsupported"
    NOTHING = "nothing"  # retrieval found nothing, so no model was asked
    RETRIEVED = "retrieved"  # --retrieve-only: no model asked
    FAILED = "failed"  # the model's call failed (the retrieval and the dissent stand)
