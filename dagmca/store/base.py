"""The GraphStore interface every backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import TYPE_CHECKING

from dagmca.errors import SessionLinked as SessionLinked
from dagmca.errors import StoreError as StoreError
from dagmca.graph import CallRecord, EdgeRecord, EdgeType, NodeKind, NodeRecord

if TYPE_CHECKING:
    from dagmca.store.search import TextIndex


class GraphStore(ABC):
    """A property graph of sessions. Writes are upserts; one `write` is one transaction.

    Schema setup is explicit (`init_schema`), never done by a constructor.
    """

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the store lives, fit to print (never carries a secret)."""

    @abstractmethod
    def init_schema(self) -> None:
        """Create tables/constraints/indexes. Idempotent."""

    @abstractmethod
    def is_initialised(self) -> bool: ...

    @abstractmethod
    def write(self, nodes: Sequence[NodeRecord] = (), edges: Sequence[EdgeRecord] = ()) -> None:
        """Upsert nodes (whole records: properties and labels replaced) and edges
        (unique per source, target, type and key) in one transaction."""

    @abstractmethod
    def get_node(self, node_id: str) -> NodeRecord | None: ...

    @abstractmethod
    def nodes(self, session: str, kind: NodeKind | None = None) -> list[NodeRecord]:
        """Nodes of a session, in creation order."""

    @abstractmethod
    def edges(self, session: str, type_: EdgeType | None = None) -> list[EdgeRecord]: ...

    def edge_counts(self, session: str) -> dict[EdgeType, int]:
        """How many edges of each type a session has (a summary's, with no edge read
        whole where the backend can count them)."""
        return dict(Counter(e.type for e in self.edges(session)))

    @abstractmethod
    def sessions(self) -> list[NodeRecord]:
        """Session nodes, oldest first."""

    # -- beside the graph: LLM call accounting and the response cache --
    @abstractmethod
    def record_calls(self, calls: Sequence[CallRecord]) -> None:
        """Append call records, in one transaction."""

    @abstractmethod
    def calls(self, session: str) -> list[CallRecord]:
        """A session's call records, oldest first."""

    @abstractmethod
    def cache_get(self, key: str) -> str | None: ...

    def cache_get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """What the cache holds of `keys` (those it lacks are absent), in one read where
        the store can."""
        found = {k: self.cache_get(k) for k in dict.fromkeys(keys)}
        return {k: v for k, v in found.items() if v is not None}

    @abstractmethod
    def cache_put(self, key: str, model: str, value: str) -> None:
        """Keep a response; a second put of the same key keeps the first."""

    @abstractmethod
    def prune_llm(self, before: str | None, *, calls: bool = False) -> tuple[int, int]:
        """Remove cached responses stored before `before` (an ISO time; None: all) and,
        with `calls`, call records made before it. Returns (responses, calls) removed."""

    @abstractmethod
    def delete_session(self, session: str, *, force: bool = False) -> tuple[int, int, int]:
        """Remove a session's nodes, every relationship touching them and its call
        records (the response cache is shared, and stays), in one transaction where the
        store can. Refused (`SessionLinked`, nothing removed) when relationships of other
        sessions touch its nodes, unless `force`, which removes those too. The personas
        (`PERSONA_SESSION`) are never removed this way. Returns (nodes, relationships,
        call records) removed."""

    # -- beside the graph: the retrieval index of `dagmca ask` --
    def text_index(self, *, fulltext: bool = True) -> TextIndex:
        """The SQLite tables where `ask` keeps its vectors and, with `fulltext`, the
        texts it searches. A store without a SQLite file of its own has none."""
        raise StoreError(f"the store at {self.location} keeps no retrieval index")

    def search_texts(
        self, terms: Sequence[str], sessions: Sequence[str] | None, limit: int
    ) -> list[tuple[str, float]]:
        """Full-text search of the nodes' texts: (node id, score), best first, at most
        `limit`, of `sessions` (None: all); a term with spaces is a phrase. Here, of the
        texts `ask` has indexed; a store with a full-text index of its own searches that."""
        return self.text_index().search(terms, sessions, limit)

    # -- coordination between build workers --
    @abstractmethod
    def claim(self, key: str, worker: str, ttl_s: float, *, replacing: str | None = None) -> str:
        """Take (or renew) the claim `key` for `worker` for `ttl_s` seconds, in one
        transaction, and return who holds it then: `worker` when it is the worker's now,
        another worker while that one's claim has not expired — unless that worker is
        `replacing` (known to be dead), whose claim is taken over."""

    @abstractmethod
    def release(self, key: str, worker: str) -> None:
        """Give up the worker's claim `key` (nothing when it is not the worker's)."""

    @abstractmethod
    def close(self) -> None: ...

    def batch(self) -> AbstractContextManager[None]:
        """The writes made inside, as one transaction where the store can, each write
        still taken back alone when it fails (the ones before it stay). Here, each write
        is its own."""
        return nullcontext()

    def has_session(self, session: str) -> bool:
        node = self.get_node(session)
        return node is not None and node.kind is NodeKind.SESSION

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
