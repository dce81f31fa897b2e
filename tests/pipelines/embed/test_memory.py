"""The encoder's memory is flat in the number of texts: each run is a fresh process (forked
from one that has only imported the modules, so the imports are paid once), so its peak RSS
growth is what that many texts cost from a cold start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.snapshot import ROOT, SNAPSHOT_XML

MEASURE = """
import json, os, random, sys, threading, time
import psutil
import torch, transformers.models.bert.modeling_bert
from pipelines.embed.encoder import Encoder
from pipelines.embed.registry import EncoderSpec

def measure(folder, snapshot, n):
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
      nonlocal peak
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

folder, snapshot = sys.argv[1], sys.argv[2]
for n in sys.argv[3:]:  # each in a fresh child: nothing encoded before it
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            measure(folder, snapshot, int(n))
            code = 0
        finally:
            sys.stdout.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert status == 0, status
"""


def _growth(folder: Path, *sizes: int) -> list[dict[str, float]]:
    """Peak RSS growth and size of the vectors of a fresh run on each number of texts."""
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(folder), str(SNAPSHOT_XML), *map(str, sizes)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    found = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(found) == len(sizes), out.stdout
    return found


def test_rss_growth_is_flat_in_the_number_of_texts(tiny_bert: Path) -> None:
    small, large = _growth(tiny_bert, 1_000, 4_000)
    # 4x the texts (8 blocks of 512): tokenized all at once they cost about 100 MB a thousand
    # here (1,284 MB measured for 12,000 texts before blocks, against 143 MB for 1,500), so 300
    # MB more than the small run (182 MB measured with one block for all); in blocks the growth
    # beyond the vectors themselves stays within the allocator's noise (10 MB)
    extra = large["growth_mb"] - large["output_mb"] - small["growth_mb"]
    assert extra < 100, (small, large)
    assert large["growth_mb"] < 500
