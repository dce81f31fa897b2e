"""LV-Eval's own data layout, so its ``prediction.py`` and ``evaluation.py`` run on our records.

``<out>/<variant>/<name>_<level>.jsonl``: one folder per variant (a records file mixes all
four), one line per record with the fields of LV-Eval's README "Data Format" (``input``,
``context``, ``answers``, ``length``, ``dataset``, ``language``, ``answer_keywords``,
``confusing_facts``). ``<name>`` must be a set name LV-Eval's ``config.py`` knows; it only selects
their prompt, answer cap and metric. The default is ``multifieldqa_en_mixup`` for English and
``multifieldqa_zh_mixup`` for Chinese: open-domain QA over mixed passages, scored with the
keyword-gated F1 (AK) of the same language, with the same prompt in both languages. Lines keep
the order of the records files, so predictions join back to records by file and line number.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

import pyarrow.parquet as pq

from builders.lveval.records import VARIANTS

# LV-Eval's config.py (commit 63e7ae9): the sets scored with AK (``qa_f1_score_with_gold_ans``
# or ``qa_f1_zh_score_with_gold_ans``), by the language of that metric
AK_NAMES: dict[str, str] = {
    "hotpotwikiqa_mixup": "en",
    "loogle_SD_mixup": "en",
    "loogle_CR_mixup": "en",
    "loogle_MIR_mixup": "en",
    "multifieldqa_en_mixup": "en",
    "multifieldqa_zh_mixup": "zh",
    "cmrc_mixup": "zh",
    "lic_mixup": "zh",
}
DEFAULT_NAMES: dict[str, str] = {"en": "multifieldqa_en_mixup", "zh": "multifieldqa_zh_mixup"}
FIELDS = (
    "input", "context", "answers", "length", "dataset", "language", "answer_keywords",
    "confusing_facts",
)  # fmt: skip
_READ = (*FIELDS, "level", "variant")
README = "README.md"


def official_name(language: str, name: str | None = None) -> str:
    """The LV-Eval set name for records of ``language``: ``name`` if given (checked), else the
    default of the language."""
    if name is None:
        if language not in DEFAULT_NAMES:
            raise ValueError(f"no LV-Eval set name for language {language!r}")
        return DEFAULT_NAMES[language]
    if name not in AK_NAMES:
        raise ValueError(
            f"{name!r} is not an AK-scored set of LV-Eval's config.py: {list(AK_NAMES)}"
        )
    if AK_NAMES[name] != language:
        raise ValueError(f"{name!r} is scored as {AK_NAMES[name]!r}, the records are {language!r}")
    return name


def file_stem(name: str, level: str) -> str:
    """``<name>_<level>``, checked to split back the way LV-Eval's code splits it."""
    stem = f"{name}_{level}"
    if re.split(r"_.{1,3}k", stem)[0] != name or stem.split("_")[-1] != level:
        raise ValueError(f"level {level!r}: LV-Eval's code cannot read {stem!r} back")
    return stem


def official_line(row: Mapping[str, Any], name: str) -> dict[str, Any]:
    """One record as an LV-Eval line; ``dataset`` is the LV-Eval set name."""
    return {
        "input": row["input"],
        "context": row["context"],
        "answers": list(row["answers"] or []),
        "length": int(row["length"]),
        "dataset": name,
        "language": row["language"],
        "answer_keywords": row["answer_keywords"] or "",
        "confusing_facts": list(row["confusing_facts"] or []),
    }


def _rows(path: Path, batch_rows: int) -> Iterator[dict[str, Any]]:
    """The rows of a records file, one row group at a time (the stage writes groups of at most
    ``write_buffer_mb`` of context text), at most ``batch_rows`` of them as Python rows at once.
    Not ``iter_batches``: it reads ahead, and held 1.6 GB for a 256k level of 1,536 records."""
    records = pq.ParquetFile(path)
    for group in range(records.metadata.num_row_groups):
        table = records.read_row_group(group, columns=list(_READ))
        for batch in table.to_batches(max_chunksize=batch_rows):
            yield from batch.to_pylist()


def write_official(
    records: Path, out: Path, name: str | None = None, *, batch_rows: int = 64
) -> dict[str, int]:
    """Write every ``records/*.parquet`` file in LV-Eval's layout under ``out``; return the
    lines per written file (``<variant>/<name>_<level>.jsonl``)."""
    counts: dict[str, int] = {}
    owner: dict[str, Path] = {}
    for variant in VARIANTS:
        (out / variant).mkdir(parents=True, exist_ok=True)
    for path in sorted(records.glob("*.parquet")):
        with ExitStack() as stack:
            files: dict[str, IO[str]] = {}
            for row in _rows(path, batch_rows):
                stem = file_stem(official_name(row["language"], name), row["level"])
                key = f"{row['variant']}/{stem}.jsonl"
                if owner.setdefault(key, path) != path:
                    raise ValueError(f"{path.name} and {owner[key].name} both map to {key}")
                if key not in files:
                    files[key] = stack.enter_context((out / key).open("w", encoding="utf-8"))
                    counts[key] = 0
                line = official_line(row, stem.rsplit("_", 1)[0])
                files[key].write(json.dumps(line, ensure_ascii=False) + "\n")
                counts[key] += 1
    (out / README).write_text(readme(counts), encoding="utf-8")
    return counts


def readme(counts: Mapping[str, int]) -> str:
    """How to run LV-Eval's scripts on the layout (``counts`` as :func:`write_official`)."""
    stems = sorted({Path(k).stem for k in counts})
    names = sorted({re.split(r"_.{1,3}k", s)[0] for s in stems})
    levels = sorted({s.split("_")[-1] for s in stems}, key=lambda s: int(s[:-1]))
    listing = "\n".join(f"- `{k}`: {n} records" for k, n in sorted(counts.items()))
    return f"""# LV-Eval layout

Our records in the layout of LV-Eval's own scripts (`infinigence/LVEval`, commit 63e7ae9): one
folder per variant (clean, cfi, kpr, cfi_kpr), one `<name>_<level>.jsonl` per set and level,
each line with LV-Eval's fields (`input`, `context`, `answers`, `length`, `dataset`,
`language`, `answer_keywords`, `confusing_facts`). The set name ({", ".join(names)}) is one
their `config.py` knows; it only selects their prompt, answer cap (64 tokens) and metric (AK,
the keyword-gated F1). Lines keep the order of `records/*.parquet`.

{listing}

## Running their scripts

1. In their `config.py`, set `DATASET_SELECTED = {names!r}` and
   `DATASET_LENGTH_LEVEL = {levels!r}`. Otherwise every other set and level is reported
   `not exists`, gets an empty predictions file, and `evaluation.py` divides by zero on it.
2. Once per variant (their `batch_eval_*.sh` scripts pass no `--data-path`, so call it directly):

       python prediction.py --model-path MODEL --model-max-length 15500 \\
           --data-path /path/to/official/clean --output-dir outputs/clean --single-process

3. Score it: `python evaluation.py --input-dir outputs/clean` writes
   `outputs/clean/eval_result/result.json` and `result.csv` (a score per `<name>_<level>`).

Each variant needs its own `--output-dir`: the file names are the same in every variant.
"""
