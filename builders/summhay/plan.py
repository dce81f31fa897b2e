"""The seeded document plan: which subtopics and insights each document carries.

Guarantees (checked by the tests): every document carries ``subtopics_per_document`` distinct
subtopics and between 1 and ``max_insights`` insights of each; every insight is planned in at
least one document; subtopics are spread evenly (their document counts differ by at most one).
SummHay: each document carries 2 subtopics and up to 4 insights of each.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence

from builders.summhay.records import Insight, PlannedDocument, Subtopic


class PlanError(ValueError):
    """The settings cannot satisfy the plan's guarantees; the message says which to change."""


def plan_documents(
    subtopics: Sequence[Subtopic],
    insights: Sequence[Insight],
    *,
    documents: int,
    subtopics_per_document: int,
    max_insights: int,
    rng: random.Random,
    id_prefix: str = "D",
) -> list[PlannedDocument]:
    """Plan ``documents`` documents over ``subtopics`` and their ``insights``."""
    k = subtopics_per_document
    by_subtopic: dict[str, list[str]] = defaultdict(list)
    for insight in insights:
        by_subtopic[insight.subtopic_id].append(insight.insight_id)
    active = [s.subtopic_id for s in subtopics if by_subtopic.get(s.subtopic_id)]
    if len(active) < k:
        raise PlanError(
            f"{len(active)} subtopics with insights cannot fill {k} subtopics per document "
            "(lower subtopics_per_document or ask for more subtopics)"
        )
    order = active[:]
    rng.shuffle(order)
    # document d carries subtopics d*k .. d*k+k-1 of the shuffled cycle: distinct, and even
    slots: dict[str, list[int]] = defaultdict(list)
    chosen: list[list[str]] = []
    for d in range(documents):
        picked = [order[(d * k + i) % len(order)] for i in range(k)]
        chosen.append(picked)
        for sid in picked:
            slots[sid].append(d)
    for sid in active:
        need = math.ceil(len(by_subtopic[sid]) / max_insights)
        if len(slots[sid]) < need:
            raise PlanError(
                f"subtopic {sid} has {len(by_subtopic[sid])} insights but only "
                f"{len(slots[sid])} documents at {max_insights} insights each; raise documents "
                "or max_insights_per_subtopic"
            )
    carried: dict[tuple[int, str], list[str]] = {}
    for sid in active:
        ids = by_subtopic[sid][:]
        rng.shuffle(ids)
        docs = slots[sid][:]
        rng.shuffle(docs)
        # coverage first: insight i goes to document i mod m (at most ceil(M/m) <= j each)
        for d in docs:
            carried[(d, sid)] = []
        for i, iid in enumerate(ids):
            carried[(docs[i % len(docs)], sid)].append(iid)
        # then repetition: each slot grows to a random size in [1, j] with other insights
        for d in docs:
            have = carried[(d, sid)]
            target = rng.randint(max(1, len(have)), min(max_insights, len(ids)))
            extra = [iid for iid in ids if iid not in have]
            rng.shuffle(extra)
            have.extend(extra[: target - len(have)])
    width = len(str(documents))
    plans = []
    for d, picked in enumerate(chosen):
        insight_ids = [iid for sid in picked for iid in sorted(carried[(d, sid)])]
        plans.append(
            PlannedDocument(f"{id_prefix}{d + 1:0{width}d}", tuple(picked), tuple(insight_ids))
        )
    return plans
