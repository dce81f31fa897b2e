"""Benchmark the calibrated encoder against sentence-transformers, in one process, on the same
inputs: what a user of the embed stage gets on this machine.

Passages of 20 to 400 words are cut from the snapshot wiki.

1. Calibration, as the embed stage runs it (``embed.dtype``, ``attention``, ``batch_tokens`` and
   ``backend`` at auto): each candidate is timed on a sample and the fastest that agrees with
   float32 is kept. Its time is reported apart.
2. A sweep of sentence-transformers over float32 and half precision at several batch sizes on the
   first ``--sweep`` passages finds its best setting on this machine.
3. The calibrated encoder (first, from a cold start, so its memory figure includes the allocator's
   first pools), sentence-transformers' default and its best embed all passages.

Reported: the machine (CPU model and flags, or GPU), tokens/s, documents/s, padding share, peak
RSS growth and peak GPU memory during each run, agreement with sentence-transformers' float32
output (cosine, top-10 overlap), and the ratio to its best.

    python bench/embed.py --passages 3000 --sweep 1000     # CPU, MiniLM
    python bench/embed.py --device cuda --passages 10000   # GPU, MiniLM
    python bench/embed.py --device cuda --model bert-base-random   # GPU, BERT-base sized (random)

``bert-base-random`` is a randomly initialised BERT-base built from its config with MiniLM's
tokenizer: fine for speed, meaningless for quality.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psutil
import torch

from pipelines.embed.agreement import agreement
from pipelines.embed.calibrate import calibrate, machine
from pipelines.embed.encoder import build_encoder
from pipelines.embed.models import default_minilm
from pipelines.embed.settings import EmbedSettings

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshot" / "wiki" / "export.xml"


def passages(n: int, seed: int = 0) -> list[str]:
    """``n`` passages of 20 to 400 words from the snapshot."""
    words = SNAPSHOT.read_text().split()
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        start = rng.randrange(len(words) - 400)
        out.append(" ".join(words[start : start + rng.randint(20, 400)]))
    return out


def peak_memory(run: Callable[[], np.ndarray]) -> tuple[np.ndarray, float, float, float]:
    """Run, sampling RSS every 20 ms; return the result, seconds, peak RSS growth in MB and
    peak GPU memory allocated in MB (0 without CUDA)."""
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    proc = psutil.Process()
    base = proc.memory_info().rss
    peak = [base]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.02)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    start = time.perf_counter()
    result = run()
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    done.set()
    thread.join()
    gpu = torch.cuda.max_memory_allocated() / 2**20 if cuda else 0.0
    return result, seconds, (peak[0] - base) / 2**20, gpu


def model_folder(name: str, tmp: Path) -> str:
    """A model folder: the packaged MiniLM, or a random BERT-base built from its config."""
    if name == "minilm":
        return default_minilm()
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    folder = tmp / "bert-base-random"
    BertModel(BertConfig()).save_pretrained(folder)
    AutoTokenizer.from_pretrained(default_minilm()).save_pretrained(folder)
    return str(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=10000)
    parser.add_argument("--sweep", type=int, default=2000, help="passages for the ST sweep")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--model", default="minilm", choices=["minilm", "bert-base-random"])
    parser.add_argument(
        "--quantize", default="auto", choices=["auto", "none"], help="int8 as a candidate"
    )
    args = parser.parse_args()
    from sentence_transformers import SentenceTransformer

    texts = passages(args.passages)
    tmp = Path(tempfile.mkdtemp())
    folder = model_folder(args.model, tmp)
    cuda = args.device == "cuda"
    settings = EmbedSettings.model_validate(
        {
            "model": "minilm" if args.model == "minilm" else folder,
            "device": args.device,
            "quantize": args.quantize,
            "calibration": tmp / "calibration.json",
            "onnx_cache": tmp / "onnx",
            "calibrate_min_texts": 0,
        }
    )
    info = machine()
    start = time.perf_counter()
    calibration = calibrate(
        settings, texts[: settings.calibrate_texts], len(texts), cuda=cuda, info=info
    )
    calibration_seconds = time.perf_counter() - start
    chosen = calibration.chosen
    ours = build_encoder(settings, **chosen.options())
    max_length = ours.spec.max_length
    lengths = [
        len(x) for x in ours.tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]
    ]
    tokens = sum(lengths)
    where = (
        ", ".join(info["gpus"]) if "gpus" in info else f"{info['cpu']} ({' '.join(info['flags'])})"
    )
    print(
        f"machine: {where}, {info['cores']} cores, torch {info['torch']}"
        f"{''.join(f', {k} {info[k]}' for k in ('onnxruntime', 'openvino') if k in info)}; "
        f"model {args.model}; {len(texts)} passages, {tokens:,} tokens (max {max_length})"
    )
    print(f"\ncalibration on {settings.calibrate_texts} passages, {calibration_seconds:.1f} s:")
    for row in calibration.measured:
        mark = "" if row["passed"] else "  (fails the floors)"
        stage = " [budget]" if row.get("stage") == 2 else ""
        print(
            f"  {row['candidate']}{stage}: {row['texts_per_s']} passages/s, "
            f"cosine {row['mean_cosine']}, top-10 {row['top_k_overlap']}{mark}"
        )
    print(f"  chosen: {chosen.label} ({calibration.reason})")

    def st_model(dtype: str) -> SentenceTransformer:
        model = SentenceTransformer(folder, device=args.device)
        model.max_seq_length = max_length
        return model.to(getattr(torch, dtype))

    def st_run(model: SentenceTransformer, batch: int, subset: list[str]) -> np.ndarray:
        return model.encode(
            subset, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True
        ).astype(np.float32)

    # the sweep: sentence-transformers' best precision and batch size on a subset
    half = "bfloat16" if not cuda or torch.cuda.is_bf16_supported() else "float16"
    sweep = texts[: args.sweep]
    batches = [16, 32, 64] if not cuda else [64, 128, 256, 512]
    best = ("float32", 32, 0.0)
    print(f"\nsweep of sentence-transformers on {len(sweep)} passages:")
    for dtype in ("float32", half):
        model = st_model(dtype)
        st_run(model, 16, sweep[:32])  # warm-up
        for batch in batches:
            start = time.perf_counter()
            st_run(model, batch, sweep)
            rate = len(sweep) / (time.perf_counter() - start)
            print(f"  {dtype} batch {batch}: {rate:.1f} passages/s")
            if rate > best[2]:
                best = (dtype, batch, rate)
        del model

    stats_box = {}

    def ours_run() -> np.ndarray:
        vectors, stats = ours.encode_with_stats(texts)
        stats_box["padding"] = stats.padding
        return vectors

    ours.encode(texts[:32])  # warm-up
    default = st_model("float32")
    best_model = st_model(best[0])
    runs: list[tuple[str, Callable[[], np.ndarray]]] = [
        (f"benchsmith, calibrated: {chosen.label}", ours_run),
        ("sentence-transformers, float32, batch 32 (default)", lambda: st_run(default, 32, texts)),
        (
            f"sentence-transformers, {best[0]}, batch {best[1]} (best)",
            lambda: st_run(best_model, best[1], texts),
        ),
    ]
    results = []
    for label, run in runs:
        vectors, seconds, memory, gpu_memory = peak_memory(run)
        results.append((label, vectors, seconds, memory, gpu_memory))
    reference = results[1][1]
    base = results[1][2]
    print(
        "\n| encoder | tokens/s | passages/s | vs ST default | padding | peak RSS growth MB "
        "| peak GPU MB | mean cosine | min cosine | top-10 overlap |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, vectors, seconds, memory, gpu_memory in results:
        agree = agreement(reference, vectors)
        padding = f"{stats_box['padding']:.3f}" if label.startswith("benchsmith") else "–"
        print(
            f"| {label} | {tokens / seconds:,.0f} | {len(texts) / seconds:,.1f} "
            f"| {base / seconds:.2f}x | {padding} | {memory:,.0f} | {gpu_memory:,.0f} "
            f"| {agree.mean_cosine:.5f} "
            f"| {agree.min_cosine:.5f} | {agree.overlap:.3f} |"
        )
    ratio = results[2][2] / results[0][2]
    print(
        f"\nbenchsmith (calibrated) vs sentence-transformers at its best on this machine: "
        f"{ratio:.2f}x (calibration {calibration_seconds:.1f} s, once per machine)"
    )


if __name__ == "__main__":
    main()
