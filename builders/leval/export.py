"""L-Eval's JSONL layout: ``{input, instructions[], outputs[], source, evaluation}``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def leval_line(record: Mapping[str, Any], evaluation: str = "f1") -> dict[str, Any]:
    """One LV-Eval-style record in L-Eval's layout: the long context is the ``input``, the
    question the one instruction, the first answer the reference output."""
    return {
        "input": record["context"],
        "instructions": [record["input"]],
        "outputs": [record["answers"][0]],
        "source": f"benchsmith/{record['dataset']}/{record['level']}/{record['variant']}",
        "evaluation": evaluation,
    }
