"""A real streamjobs server for tests: uvicorn on a free loopback port, in a background thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from streamjobs.composition import Server, server_over, uvicorn_proxy_options
from streamjobs.launch.ports import free_loopback_port
from streamjobs.services.container import Services


@contextmanager
def live_server(serving: Server | Services) -> Iterator[str]:
    """Answer HTTP as ``serving`` does (a built server, or one without a supervisor over the
    given services) until the block ends; yields the base URL. A supervisor is not started:
    the test ticks it."""
    server = serving if isinstance(serving, Server) else server_over(serving, supervise=False)
    port = free_loopback_port()
    config = uvicorn.Config(
        server.asgi,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        **uvicorn_proxy_options(server.settings),
    )
    uvicorn_server = uvicorn.Server(config)
    thread = threading.Thread(target=uvicorn_server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uvicorn_server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the test server on port {port} did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=10)
