"""A swarm's report on disk: swarm.json, and with matplotlib (the `plot` extra) the
curves of S, D and accuracy against tasks seen, one line per router with a band from
the lowest to the highest repeat, and the final affinity matrix as a heat map. Drawn
headless (Agg) on figures of their own, so nothing global of matplotlib's is touched."""

from __future__ import annotations

from pathlib import Path

from dagmca.graph.store_nodes import TrackRecord
from dagmca.swarm.report import Curve, SwarmReport

TITLES = {"accuracy": "accuracy so far", "s": "S (window)", "d": "D"}


def write_outputs(report: SwarmReport, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "swarm.json"]
    written[0].write_text(report.model_dump_json(indent=2), encoding="utf-8")
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return written
    fig = Figure(figsize=(12, 3.6))
    for ax, name in zip(fig.subplots(1, 3), ("accuracy", "s", "d"), strict=True):
        drawn = [_band(ax, curve, name) for curve in report.curves]
        ax.set_xlabel("tasks seen")
        ax.set_title(TITLES[name])
        if any(drawn):
            ax.legend(fontsize=7)
        else:  # no router has a value yet (D needs two agents with solved examples): say so
            ax.text(0.5, 0.5, f"no {TITLES[name]} values", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    fig.savefig(folder / "swarm-curves.png", dpi=110)
    written.append(folder / "swarm-curves.png")
    heat = Figure(figsize=(3.2 * len(report.routers), 3.2))
    axes = heat.subplots(1, len(report.routers), squeeze=False)[0]
    for ax, row in zip(axes, report.routers, strict=True):
        grid = [[_rate(row.record.get(a, {}).get(t)) for t in report.types] for a in report.agents]
        ax.imshow(grid, vmin=0, vmax=1, cmap="viridis")
        ax.set_xticks(range(len(report.types)), report.types, rotation=45, fontsize=7)
        ax.set_yticks(range(len(report.agents)), report.agents, fontsize=7)
        ax.set_title(f"{row.router}: success rate", fontsize=8)
    heat.tight_layout()
    heat.savefig(folder / "swarm-affinity.png", dpi=110)
    written.append(folder / "swarm-affinity.png")
    return written


def _rate(cell: TrackRecord | None) -> float:
    return cell.rate if cell else 0.5


def _band(ax: object, curve: Curve, name: str) -> bool:
    """The curve's mean over repeats and its band, where it has values; whether it had any."""
    runs = getattr(curve, name)
    points = [[v for v in column if v is not None] for column in zip(*runs, strict=False)]
    xs = [x for x, p in zip(curve.seen, points, strict=False) if p]
    kept = [p for p in points if p]
    if not xs:
        return False
    mean = [sum(p) / len(p) for p in kept]
    ax.plot(xs, mean, label=curve.router)  # type: ignore[attr-defined]
    ax.fill_between(xs, [min(p) for p in kept], [max(p) for p in kept], alpha=0.2)  # type: ignore[attr-defined]
    return True
