from dagmca.debate.dag.selector import select
from dagmca.graph import TensionCategory, TensionNode
from dagmca.similarity import HashingEmbedder


def t(i: int, q: str, urgency: float, category: TensionCategory = TensionCategory.GAP) -> TensionNode:
    return TensionNode(
        id=f"t{i}",
        session="s",
        debate="d",
        question=q,
        urgency=urgency,
        rationale="",
        excerpt="",
        observer="o",
        category=category,
    )


TENSIONS = [
    t(1, "is the charge fair to workers", 0.95),
    t(2, "is the charge fair to workers really", 0.9),
    t(3, "is the charge really fair to workers", 0.9),
    t(4, "will traffic move to poorer neighbourhoods", 0.5),
    t(5, "can revenue survive future councils", 0.4, TensionCategory.META),
    t(6, "do shops depend on suburban drivers", 0.35, TensionCategory.ASSUMPTION),
]


def test_diverse_prefers_distant_questions_over_urgent_near_duplicates() -> None:
    sim = HashingEmbedder().matrix([x.question for x in TENSIONS])
    picked = select("diverse", TENSIONS, 3, sim)
    assert picked[0].id == "t1"  # starts from the most urgent
    assert {p.id for p in picked} & {"t2", "t3"} == set()


def test_urgent_deep_and_meta() -> None:
    assert [p.id for p in select("urgent", TENSIONS, 3)] == ["t1", "t2", "t3"]
    assert select("meta", TENSIONS, 1)[0].id == "t5"
    deep = select("deep", [TENSIONS[3], TENSIONS[5]], 1)
    assert deep[0].id == "t4"  # gap 0.7*0.5=0.35 beats assumption 1.0*0.35
    assert select("diverse", [], 3, HashingEmbedder().matrix(["x"])) == []
