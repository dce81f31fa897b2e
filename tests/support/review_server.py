"""The review page served for real on 127.0.0.1, in a thread of the test process."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from pipelines.review import ReviewSession, create_app
from tests.support.process import free_port


@contextmanager
def review_server(session: ReviewSession) -> Iterator[str]:
    """Serve ``session`` on a free port of 127.0.0.1; yields the base URL, stops on exit."""
    port = free_port()
    config = uvicorn.Config(create_app(session), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the review server did not start on 127.0.0.1:{port}")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(5)
