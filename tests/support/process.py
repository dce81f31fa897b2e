"""Real servers for tests: a free port, start in a process group, wait for HTTP, stop the group."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

log = logging.getLogger(__name__)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_group(
    cmd: Sequence[str], *, log_path: Path, env: Mapping[str, str], cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start ``cmd`` as the leader of a new session (its own process group), output to a log."""
    with open(log_path, "wb") as out:
        return subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_http(
    proc: subprocess.Popen[bytes],
    url: str,
    *,
    timeout: float,
    log_path: Path,
    name: str,
    ready: Callable[[bytes], bool] = lambda body: True,
) -> None:
    """Poll ``url`` until it answers 200 with a body ``ready`` accepts; raise with the log tail."""
    deadline = time.monotonic() + timeout
    last_err: Exception | None = None
    while (rc := proc.poll()) is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                if ready(resp.read()):
                    return
        except (OSError, ValueError) as e:
            last_err = e
        time.sleep(0.1)
    why = f"it exited with rc={rc}" if rc is not None else f"no answer in {timeout}s"
    tail = log_path.read_text(errors="replace")[-3000:]
    raise RuntimeError(
        f"{name} at {url} did not start: {why} (last error: {last_err!r})\n"
        f"--- output tail ---\n{tail}"
    )


def stop_group(proc: subprocess.Popen[bytes] | None, name: str = "server") -> None:
    """SIGTERM the process group, then SIGKILL it until every member is gone, and reap."""
    if proc is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # until every member is gone (reaped by init)
        proc.poll()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    log.warning("%s process group %d still present after stop", name, proc.pid)
