"""The HTTP client of the streamjobs REST API, used by the CLI (and by anyone scripting the server).

``StreamjobsClient`` offers the API's operations (``operations``); every failure is a
``ClientError`` carrying the HTTP status and the server's problem document (``transport``).
"""

from streamjobs.client.operations import StreamjobsClient
from streamjobs.client.transport import (
    CONFLICT_ATTEMPTS,
    DEFAULT_SERVER,
    ClientError,
    retry_on_conflict,
)

__all__ = [
    "CONFLICT_ATTEMPTS",
    "DEFAULT_SERVER",
    "ClientError",
    "StreamjobsClient",
    "retry_on_conflict",
]
