"""Python client for memgate: WebSocket (JSON or MessagePack) and HTTP, asyncio."""

from .errors import ERROR_CODES, MemgateError
from .http import HttpClient
from .resilient import ResilientSession
from .types import Ack, Context, Entity, Fact, FlushReport, SearchReply, SearchResult
from .ws import RECONNECT_CODES, MemgateClient

__all__ = [
    "Ack",
    "Context",
    "ERROR_CODES",
    "Entity",
    "Fact",
    "FlushReport",
    "HttpClient",
    "MemgateClient",
    "MemgateError",
    "RECONNECT_CODES",
    "ResilientSession",
    "SearchReply",
    "SearchResult",
]
