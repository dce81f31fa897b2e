"""The encoder's memory is flat in the number of texts: each run is a fresh process, so its
peak RSS growth is what that many texts cost from a cold start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.snapshot import ROOT, SNAPSHOT_XML

MEASURE = """
import json, random, sys, threading, time
import psutil
from pipelines.embed.encoder import Encoder
from pipelines.embed.registry import EncoderSpec

folder, snapshot, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
words = open(snapshot).read().split()
rng = random.Random(0)
texts = []
for _ in range(n):
    start = rng.randrange(len(words) - 300)
    texts.append(" ".join(words[start : start + rng.randint(5, 300)]))
encoder = Encoder(EncoderSpec("t", folder, "mean", True, max_length=256), dtype="float32")
encoder.encode(texts[:8])  # loaded, first kernels made
proc = psutil.Process()
base = peak = proc.memory_info().rss
done = threading.Event()

def sample():
    global peak
    while not done.is_set():
        peak = max(peak, proc.memory_info().rss)
        time.sleep(0.005)

thread = threading.Thread(target=sample)
thread.start()
vectors = encoder.encode(texts)
done.set()
thread.join()
peak = max(peak, proc.memory_info().rss)
print(json.dumps({"growth_mb": (peak - base) / 2**20, "output_mb": vectors.nbytes / 2**20}))
"""


def _growth(folder: Path, n: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(folder), str(SNAPSHOT_XML), str(n)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_rss_growth_is_flat_in_the_number_of_texts(tiny_bert: Path) -> None:
    small, large = _growth(tiny_bert, 1_000), _growth(tiny_bert, 4_000)
    # 4x the texts (8 blocks of 512): tokenized all at once they cost about 100 MB a thousand
    # here (1,284 MB measured for 12,000 texts before blocks, against 143 MB for 1,500), so 300
    # MB more than the small run; in blocks the growth beyond the vectors themselves stays
    # within the allocator's noise
    extra = large["growth_mb"] - large["output_mb"] - small["growth_mb"]
    assert extra < 100, (small, large)
    assert large["growth_mb"] < 500
