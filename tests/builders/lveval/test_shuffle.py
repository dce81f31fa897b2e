"""The bulk shuffle gives ``random.Random.shuffle``'s order and leaves the same random state."""

from __future__ import annotations

import random
from itertools import islice

import pytest

from builders.lveval.shuffle import HEAD, SHORT, shuffled_positions


def both(n: int, seed: str) -> tuple[random.Random, random.Random, list[int]]:
    """Two generators in the same state, the first having shuffled a list of ``n``."""
    python, bulk = random.Random(seed), random.Random(seed)
    python.random(), bulk.random()  # mid-stream, as after earlier draws
    order = list(range(n))
    python.shuffle(order)
    return python, bulk, order


@pytest.mark.parametrize(
    "n",
    [0, 1, 2, SHORT - 1, SHORT, SHORT + 1, 4095, 4096, 4097, 8191, 8193, 20_000],
)
def test_the_order_and_the_state_after_are_random_shuffle_s(n: int) -> None:
    for seed in ("2026:qa-1:16k", "7"):
        python, bulk, order = both(n, f"{seed}:{n}")
        assert list(shuffled_positions(n, bulk)) == order
        assert bulk.getstate() == python.getstate()
        assert bulk.random() == python.random()


def test_every_draw_is_made_before_the_order_is_read() -> None:
    python, bulk, order = both(12_000, "lazy")
    positions = shuffled_positions(12_000, bulk)
    assert bulk.getstate() == python.getstate()  # nothing read yet
    assert list(islice(positions, 30)) == order[:30]
    assert list(islice(positions, HEAD)) == order[30 : 30 + HEAD]  # across the head's end
    assert list(positions) == order[30 + HEAD :]


def test_positions_index_any_list() -> None:
    python, bulk = random.Random("words"), random.Random("words")
    items = [f"passage {k}" for k in range(5_000)]
    expected = list(items)
    python.shuffle(expected)
    assert [items[k] for k in shuffled_positions(len(items), bulk)] == expected


def test_another_generator_class_is_left_to_its_own_shuffle() -> None:
    class Counting(random.Random):
        """Overrides random(), so its shuffle draws with random() instead of getrandbits."""

        calls = 0

        def random(self) -> float:
            Counting.calls += 1
            return super().random()

    expected = list(range(SHORT * 2))
    Counting(3).shuffle(expected)
    drawn = Counting.calls
    assert drawn > 0
    assert list(shuffled_positions(SHORT * 2, Counting(3))) == expected
    assert Counting.calls == 2 * drawn
