"""Run events as the event log and a trace read them."""

from __future__ import annotations

from dataclasses import fields

from dagmca.debate import events
from dagmca.debate.events import Event


def _kinds(cls: type[Event]) -> list[type[Event]]:
    return [k for sub in cls.__subclasses__() for k in (sub, *_kinds(sub))]


def test_an_events_data_is_its_fields_in_order() -> None:
    kinds = _kinds(Event)
    assert len(kinds) > 10 and events.PhaseChanged in kinds
    for kind in kinds:
        made = kind(**{f.name: f"{f.name}!" for f in fields(kind)})
        data = made.data()
        assert list(data.items()) == [(f.name, f"{f.name}!") for f in fields(kind)], kind.__name__
        data["extra"] = 1  # a copy: the event is not changed through it
        assert "extra" not in made.data()
