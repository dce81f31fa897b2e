"""The document plan's guarantees, over several shapes and seeds."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from builders.summhay.plan import PlanError, plan_documents
from builders.summhay.records import Insight, Subtopic


def shape(subtopics: int, insights: int) -> tuple[list[Subtopic], list[Insight]]:
    subs = [Subtopic(f"S{s}", f"name {s}", "d") for s in range(1, subtopics + 1)]
    ins = [
        Insight(f"S{s}.{i}", f"S{s}", f"t {s} {i}")
        for s in range(1, subtopics + 1)
        for i in range(1, insights + 1)
    ]
    return subs, ins


@pytest.mark.parametrize(
    ("subtopics", "insights", "documents", "k", "j", "seed"),
    [
        (8, 6, 100, 2, 4, 1),
        (4, 4, 16, 2, 4, 2),
        (3, 10, 12, 2, 4, 3),
        (9, 3, 30, 3, 2, 4),
        (2, 3, 6, 2, 2, 5),
    ],
)
def test_plan_guarantees(
    subtopics: int, insights: int, documents: int, k: int, j: int, seed: int
) -> None:
    subs, ins = shape(subtopics, insights)
    plans = plan_documents(
        subs,
        ins,
        documents=documents,
        subtopics_per_document=k,
        max_insights=j,
        rng=random.Random(seed),
    )
    assert len(plans) == documents
    assert len({p.document_id for p in plans}) == documents
    owner = {i.insight_id: i.subtopic_id for i in ins}
    for plan in plans:
        assert len(set(plan.subtopic_ids)) == k == len(plan.subtopic_ids)
        per_subtopic = Counter(owner[i] for i in plan.insight_ids)
        assert set(per_subtopic) == set(plan.subtopic_ids), "only insights of its own subtopics"
        assert all(1 <= n <= j for n in per_subtopic.values())
        assert len(set(plan.insight_ids)) == len(plan.insight_ids)
    planned = Counter(i for p in plans for i in p.insight_ids)
    assert set(planned) == set(owner), "every insight is in at least one document"
    spread = Counter(s for p in plans for s in p.subtopic_ids)
    assert max(spread.values()) - min(spread.values()) <= 1


def test_plan_is_deterministic_for_a_seed() -> None:
    subs, ins = shape(5, 5)
    a = plan_documents(
        subs, ins, documents=20, subtopics_per_document=2, max_insights=3, rng=random.Random(7)
    )
    b = plan_documents(
        subs, ins, documents=20, subtopics_per_document=2, max_insights=3, rng=random.Random(7)
    )
    c = plan_documents(
        subs, ins, documents=20, subtopics_per_document=2, max_insights=3, rng=random.Random(8)
    )
    assert a == b and a != c


def test_too_few_documents_for_the_insights_is_refused() -> None:
    subs, ins = shape(4, 10)
    with pytest.raises(
        PlanError, match=r"S\d has 10 insights but only 2 documents at 4 insights each"
    ):
        plan_documents(
            subs, ins, documents=4, subtopics_per_document=2, max_insights=4, rng=random.Random(0)
        )


def test_too_few_subtopics_per_document_is_refused() -> None:
    subs, ins = shape(3, 2)
    ins = [i for i in ins if i.subtopic_id == "S1"]
    with pytest.raises(PlanError, match="1 subtopics with insights cannot fill 2"):
        plan_documents(
            subs, ins, documents=4, subtopics_per_document=2, max_insights=4, rng=random.Random(0)
        )
