"""The house drawn in docs/development/architecture.md (scripts/gendocs/house.py): the
figures it states are computed from the imports, so a cycle or an arrow up would show."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from gendocs.house import House, house, mermaid, top_layers  # noqa: E402


def test_an_arrow_up_and_the_cycle_it_closes_are_counted_and_drawn_red() -> None:
    down = {("cli", "store"), ("store", "graph"), ("cli", "graph")}
    h = House(layers=[["cli"], ["store"], ["graph"]], outside=[], edges=down)
    assert h.up() == [] and h.cycles() == [] and h.sideways() == []
    # cli -> graph follows from cli -> store -> graph: not drawn, still counted
    assert h.drawn() == [("cli", "store"), ("store", "graph")]
    assert "linkStyle" not in mermaid(h)

    broken = House(layers=h.layers, outside=[], edges={*down, ("graph", "cli")})
    assert broken.up() == [("graph", "cli")]
    assert broken.cycles() == [["cli", "graph", "store"]]
    assert ("graph", "cli") in broken.drawn()
    assert "stroke:red" in mermaid(broken)


def test_two_packages_of_one_layer_importing_each_other_is_sideways() -> None:
    h = House(layers=[["api"], ["llm", "store"]], outside=["aio"], edges={("llm", "store")})
    assert h.sideways() == [("llm", "store")] and h.up() == []
    assert 'subgraph Lout["in no layer"]' in mermaid(h)


def test_this_checkout_has_no_cycle_between_packages_and_no_arrow_up() -> None:
    h = house(ROOT)
    assert h.edges, "no imports found: the drawing would be empty"
    assert h.cycles() == []
    assert h.up() == [] and h.sideways() == []
    assert h.outside == []  # the house's contract is exhaustive
    assert [m for layer in top_layers(ROOT) for m in layer][:2] == ["__main__", "cli"]
