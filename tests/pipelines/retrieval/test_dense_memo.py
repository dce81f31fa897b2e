"""The dense retriever embeds each distinct chunk once per encoder, keeps a bounded memo in
front of the embedding cache, and counts where every vector came from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipelines.retrieval.rankers import CachedDense, memo_stats, rankers
from tests.support.tiny_encoder import save_tiny_bert


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(save_tiny_bert(tmp_path_factory.mktemp("tiny-bert")))


def test_vectors_come_from_the_memo_then_the_cache_then_the_encoder(
    tiny: str, tmp_path: Path
) -> None:
    cache = tmp_path / "vectors.sqlite"
    dense = CachedDense(tiny, cache, kept=2)
    texts = ["a storm hit the coast", "the council met", "a storm hit the coast"]
    scores = dense("storm", texts)
    assert scores[0] == scores[2]
    assert dense.stats() == {"asked": 3, "cache_hits": 1, "disk_hits": 0, "embedded": 2,
                             "hit_rate": 0.3333}  # fmt: skip
    assert dense("storm", texts[:2]) == scores[:2]  # both in the memo
    assert (dense.asked, dense.embedded, dense.disk_hits) == (5, 2, 0)
    dense("storm", ["levee", "flood", "harbour"])  # 3 new: the memo keeps the last 2
    assert len(dense.memo) == 2 and dense.embedded == 5
    assert dense("storm", texts[:1]) == scores[:1]  # dropped from memory, read from the cache
    assert (dense.embedded, dense.disk_hits) == (5, 1)

    rerun = CachedDense(tiny, cache)  # a new run embeds nothing it embedded before
    assert rerun("storm", ["the council met", "a new text"])[0] == scores[1]
    assert rerun.stats() == {"asked": 2, "cache_hits": 1, "disk_hits": 1, "embedded": 1,
                             "hit_rate": 0.5}  # fmt: skip
    expected = dense.scorer.embed(texts[:2]) @ dense.scorer.embed(["storm"], kind="query")[0]
    assert np.allclose(scores[:2], expected, atol=1e-6)


def test_the_stage_stats_name_each_memo(tiny: str, tmp_path: Path) -> None:
    ranks = rankers(["random", "bm25", "tfidf", "dense"], 7, tiny, tmp_path / "v.sqlite")
    for rank in ranks.values():
        rank("storm", ["a storm hit", "the council met", "a storm hit"])
    stats = memo_stats(ranks)
    assert set(stats) == {"dense_chunks", "term_chunks"}
    assert stats["dense_chunks"]["embedded"] == 2
    # BM25 and TF-IDF share their bags: the second asks find all three texts' bags
    assert stats["term_chunks"] == {"asked": 6, "cache_hits": 4, "tokenized": 2,
                                    "hit_rate": 0.6667}  # fmt: skip
