"""Benchmark the harness tasks an export ships: lm-evaluation-harness and Inspect AI run every
task of ``data/publish/<dataset>`` on SmolLM2-135M, task by task, against the time the model
itself spent (the reference), and again with lm-eval's caches warm.

The model is the test server (``tests.support.constrained_server``) on 127.0.0.1, cutting
prompts to ``--max-prompt-tokens`` in the middle as LV-Eval does. Each harness sits in a venv
of its own (``.cache/venvs``). Per task the table gives the requests, the seconds the server
spent generating (from its log), each harness's wall time and its overhead ratio, and the
second lm-eval run (``--use_cache``, ``--cache_requests``, the datasets cache warm), which must
ask the model nothing. Run after ``make repro``:

    python bench/harness.py --datasets lveval wikigenbench --limit 2
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.smollm import SmolLMServer  # noqa: E402
from tests.support.venvs import INSPECT_AI, LM_EVAL, venv_with  # noqa: E402

OFFLINE = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
_GENERATED = re.compile(r"\w+: \d+ prompt \+ \d+ completion tokens in ([\d.]+) s")


def model_seconds(server: SmolLMServer, since: int) -> tuple[int, float]:
    """Requests generated and seconds spent on them after log offset ``since``."""
    text = server.log_path.read_text("utf-8")[since:]
    times = [float(t) for t in _GENERATED.findall(text)]
    return len(times), sum(times)


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall seconds of one command, which must succeed."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:3])} failed:\n{(done.stdout + done.stderr)[-2000:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--export", type=Path, default=ROOT / "data" / "publish")
    parser.add_argument("--datasets", nargs="+", default=["lveval", "wikigenbench", "summhay"])
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--max-prompt-tokens", type=int, default=1024)
    args = parser.parse_args()
    lm_eval = venv_with("lm-eval", LM_EVAL)
    inspect = venv_with("inspect", INSPECT_AI)
    work = Path(tempfile.mkdtemp(prefix="bench-harness-"))
    options = ("--max-prompt-tokens", str(args.max_prompt_tokens))
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(f"limit {args.limit}, max tokens {args.max_tokens}, prompts cut to {options[1]} tokens")
    print("| task | requests | model s | lm-eval s | ratio | 2nd run s | asked again |", end="")
    print(" inspect s | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    (work / "server").mkdir()
    with SmolLMServer(work / "server", ROOT / ".cache", options=options) as server:
        env = {**os.environ, **OFFLINE, "HF_HOME": str(work / "hf"), "OPENAI_API_KEY": "unused"}
        env |= {"SMOLLM_BASE_URL": server.base_url, "SMOLLM_API_KEY": "unused"}
        env["LM_HARNESS_CACHE_PATH"] = str(work / "lm-eval-requests")
        model_args = (
            f"model={server.model},base_url={server.base_url}/chat/completions,"
            "num_concurrent=1,max_retries=1,tokenized_requests=False"
        )
        for dataset in args.datasets:
            folder = args.export / dataset
            tasks_py = (folder / "inspect" / "tasks.py").read_text("utf-8")
            for config in sorted(re.findall(r"_task\('([^']+)'", tasks_py)):
                task = f"{dataset}_{config}"
                cells = ["–"] * 6
                if (folder / "lm_eval" / f"{task}.yaml").is_file():
                    lm_cmd = [
                        str(lm_eval / "lm_eval"), "run", "--include_path",
                        str(folder / "lm_eval"), "--tasks", task, "--model",
                        "local-chat-completions", "--model_args", model_args,
                        "--apply_chat_template", "--limit", str(args.limit), "--gen_kwargs",
                        f"max_gen_toks={args.max_tokens}", "--use_cache",
                        str(work / f"cache-{task}"), "--cache_requests", "true",
                    ]  # fmt: skip
                    mark = len(server.log_path.read_text("utf-8"))
                    first = timed(lm_cmd, env, work)
                    requests, seconds = model_seconds(server, mark)
                    mark = len(server.log_path.read_text("utf-8"))
                    second = timed(lm_cmd, env, work)
                    again, _ = model_seconds(server, mark)
                    ratio = first / max(seconds, 1e-9)
                    cells = [str(requests), f"{seconds:.1f}", f"{first:.1f}", f"{ratio:.2f}"]
                    cells += [f"{second:.1f}", str(again)]
                inspect_cmd = [
                    str(inspect / "inspect"), "eval", f"inspect/tasks.py@{config}", "--model",
                    f"openai-api/smollm/{server.model}", "--limit", str(args.limit),
                    "--max-tokens", str(args.max_tokens), "--max-connections", "1",
                    "--log-dir", str(work / "inspect-logs"), "--display", "none",
                ]  # fmt: skip
                mark = len(server.log_path.read_text("utf-8"))
                inspect_s = timed(inspect_cmd, env, folder)
                _, inspect_model = model_seconds(server, mark)
                cells += [f"{inspect_s:.1f}", f"{inspect_s / max(inspect_model, 1e-9):.2f}"]
                print(f"| {task} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
