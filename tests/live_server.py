"""A real streamjobs server for tests: uvicorn on a free loopback port, in a background thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from streamjobs.api.app import create_app
from streamjobs.launch.ports import free_loopback_port
from streamjobs.services.container import Services


@contextmanager
def live_server(services: Services) -> Iterator[str]:
    """Serve the API over the given services until the block ends; yields the base URL."""
    port = free_loopback_port()
    config = uvicorn.Config(
        create_app(services=services), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the test server on port {port} did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
