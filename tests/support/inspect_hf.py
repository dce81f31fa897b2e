"""Run Inspect AI tasks through its own ``hf/`` loader with a mock model, one sample each.

A script for a venv holding inspect-ai (it imports nothing of benchsmith):
``python -P inspect_hf.py LOG_DIR hf/OWNER/NAME[/TASK] ...``. It prints one JSON line per task:
its name, status, samples run, scores and error; a task that fails to load exits non-zero with
the traceback on stderr.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

MOCK_ANSWER = "- A short answer [1].\nGRADE: P"
"""Every mock completion: a bullet with a citation, and a grade model_graded_qa can parse."""


def mock_output() -> ModelOutput:
    """A canned completion with its usage preset (mockllm otherwise counts tokens with an
    encoding it downloads)."""
    output = ModelOutput.from_content(model="mockllm/model", content=MOCK_ANSWER)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def summary(log: Any) -> dict[str, Any]:
    """What the test checks of one task's log."""
    scores = {
        score.name: {name: metric.value for name, metric in score.metrics.items()}
        for score in (log.results.scores if log.results else [])
    }
    return {
        "task": log.eval.task,
        "status": log.status,
        "samples": len(log.samples or []),
        "scores": scores,
        "error": str(log.error.message) if log.error else None,
    }


def main(log_dir: str, specs: list[str]) -> None:
    """Evaluate every task of ``specs`` on one sample and print a summary per task."""
    model = get_model("mockllm/model", custom_outputs=[mock_output() for _ in range(500)])
    logs = inspect_eval(specs, model=model, limit=1, log_dir=log_dir, display="none")
    for log in logs:
        print(json.dumps(summary(log)))


if __name__ == "__main__":
    try:
        main(sys.argv[1], sys.argv[2:])
    except Exception:  # Inspect prints little of a failed load: show it all
        traceback.print_exc()
        sys.exit(1)
