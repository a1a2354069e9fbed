"""A session's part of the corpus, kept in the retrieval index beside the version of
the graph it was read at, so that an ask of a session whose graph has not changed
since reads one row instead of every node (reading and validating each node, and
hashing its text, was most of a retrieval's time on a large store).

JSON, not pickle: a store file may come from elsewhere, and reading it must not run
code. Of a node's own properties, only those its label is made of are kept."""

from __future__ import annotations

import json
from typing import Any

from dagmca.ask.corpus import Corpus, Entry, Scope, SessionPart, part_of
from dagmca.ask.recent import Recent
from dagmca.graph import NodeKind
from dagmca.store.base import GraphStore, StoreError
from dagmca.store.search import TextIndex

FORMAT = 1  # raised when the layout changes: a snapshot of another is read afresh
# what Entry.label reads of a node's properties
LABEL_KEYS = ("origin", "depth", "stated_in", "observer", "perspective", "agent", "phase", "round")
KINDS = {k.value: k for k in NodeKind}  # a lookup: calling the enum for each entry cost more
PARTS: Recent[SessionPart] = Recent()  # the parts decoded in this process, by version


def encode(part: SessionPart) -> str:
    entries = [
        [
            e.id, e.kind.value, e.text, e.debate, e.status, e.question, e.urgency, e.on, e.sha,
            {k: e.props[k] for k in LABEL_KEYS if k in e.props},
        ]
        for e in part.entries
    ]  # fmt: skip
    data = {
        "format": FORMAT,
        "entries": entries,
        "ids": part.ids,
        "merges": part.merges,
        "contradicts": part.contradicts,
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def decode(session: str, text: str) -> SessionPart | None:
    """The part, or None for a snapshot of another format (or one that does not read)."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    entries = [
        Entry(i, session, KINDS[kind], body, debate, status, question, float(urgency), props, on, sha)
        for i, kind, body, debate, status, question, urgency, on, sha, props in data["entries"]
    ]
    merges = [(str(s), str(t)) for s, t in data["merges"]]
    contradicts = [(str(s), str(t), str(r)) for s, t, r in data["contradicts"]]
    return SessionPart(session, entries, [str(i) for i in data["ids"]], merges, contradicts)


def _index(store: GraphStore) -> TextIndex | None:
    try:
        index = store.text_index()
    except StoreError:  # a store that keeps no index
        return None
    return index if index.tracked else None


def load_corpus(store: GraphStore, scope: Scope) -> Corpus:
    """The corpus of `scope`: each session from its snapshot when the graph has not
    changed since it was taken, else read from the graph (and its snapshot taken); a
    part this process already decoded at that version is not read again.
    The version is read before the nodes: a write between the two gives the snapshot
    a version older than what it holds, so the next ask reads the graph again (never a
    version newer than what it holds, which would keep a stale one)."""
    index = _index(store)
    if index is None:
        return Corpus.load(store, scope)
    versions = index.versions(scope.sessions)
    corpus = Corpus(scope, versions=versions)
    for session in scope.sessions:
        version = versions[session]
        stamp = (version, scope.born.get(session, ""))
        part = PARTS.get(store, session, stamp)
        if part is None:
            kept = index.snapshot(session, version)
            part = decode(session, kept) if kept is not None else None
            if part is None:
                part = part_of(store, session)
                index.keep_snapshot(session, version, encode(part))
            PARTS.put(store, session, stamp, part)
        corpus.add(part)
    return corpus
