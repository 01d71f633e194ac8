"""memgate's WebSocket client for asyncio: one client carries one call."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional
from urllib.parse import urlsplit, urlunsplit

import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from .codec import ENCODINGS, decode, encode
from .errors import MemgateError
from .turns import new_session_id, search_body, turn_body
from .types import Ack, Context, SearchReply

#: Close codes after which the same call is resumed on a new connection: going away (a server
#: restart or drain), abnormal closure (a crash, a dropped network) and service restart.
#: Any other code (1000 normal, 1008 policy, 1009 frame too large, ...) ends the client.
RECONNECT_CODES = frozenset({1001, 1006, 1012})

_MAX_FRAME = 16 * 1024 * 1024


def ws_url(url: str) -> str:
    """The server's base URL (``http://host:7700``) or WebSocket URL as a ``ws(s)://…/v1/ws`` URL."""
    parts = urlsplit(url)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path if parts.path not in ("", "/") else "/v1/ws"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


@dataclass
class _Pending:
    frame: Dict[str, Any]
    future: "asyncio.Future[Dict[str, Any]]"
    #: The session restore of one connection: never re-sent, the next connection restores again.
    restore: bool = False


async def _open_socket(url: str, token: Optional[str], timeout: float) -> Any:
    headers = [("authorization", f"Bearer {token}")] if token else []
    try:
        try:
            # websockets >= 13 (the new asyncio implementation).
            from websockets.asyncio.client import connect as connect_new  # type: ignore[import-not-found]

            return await connect_new(url, additional_headers=headers, open_timeout=timeout, max_size=_MAX_FRAME, ping_interval=None)
        except ImportError:
            # Debian 12's websockets 10.4.
            return await websockets.connect(url, extra_headers=headers, open_timeout=timeout, max_size=_MAX_FRAME, ping_interval=None)
    except InvalidHandshake as err:
        status = getattr(err, "status_code", None) or getattr(getattr(err, "response", None), "status_code", None)
        code = {401: "unauthorized", 403: "forbidden"}.get(status or 0, "unavailable")
        raise MemgateError(code, f"WebSocket upgrade to {url} refused: {err}", status=status) from None
    except (OSError, asyncio.TimeoutError) as err:
        raise MemgateError("unavailable", f"cannot connect to {url}: {err or type(err).__name__}") from None


def _close_code(ws: Any, err: Optional[BaseException]) -> int:
    rcvd = getattr(err, "rcvd", None)
    if rcvd is not None:
        return int(rcvd.code)
    code = getattr(ws, "close_code", None)
    return int(code) if code is not None else 1006


class MemgateClient:
    """
    start / append / search / end over one WebSocket, JSON or MessagePack.

    When the server closes the socket with 1001, 1006 or 1012 the client reconnects
    with exponential backoff, re-sends ``start`` with the same session id, then every
    unanswered request with its original frame: an append keeps its ``turnId``, so the
    server stores it once (a turn it already had is acked ``duplicate=True``).
    """

    def __init__(
        self,
        url: str,
        *,
        token: Optional[str] = None,
        encoding: str = "json",
        request_timeout: float = 10.0,
        reconnect: bool = True,
        min_retry: float = 0.1,
        max_retry: float = 5.0,
        max_attempts: Optional[int] = None,
        on_state: Optional[Callable[[str], None]] = None,
    ) -> None:
        if encoding not in ENCODINGS:
            raise MemgateError("bad_request", f"encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r}")
        self.url = ws_url(url)
        self.token = token
        self.encoding = encoding
        self.request_timeout = request_timeout
        self.reconnect = reconnect
        self.min_retry = min_retry
        self.max_retry = max_retry
        self.max_attempts = max_attempts
        self.on_state = on_state
        self._ws: Any = None
        self._ready = False
        self._closed = False
        #: Why the client stopped for good (set with ``_closed``), for the error of a later request.
        self._closed_reason = "client closed"
        self._ids = itertools.count(1)
        self._pending: Dict[str, _Pending] = {}
        self._session: Optional[Dict[str, str]] = None
        self._reader: Optional["asyncio.Task[None]"] = None
        self._reconnecting: Optional["asyncio.Task[None]"] = None
        #: Connections opened after the first (what a test or a log wants to see).
        self.reconnects = 0

    @classmethod
    async def connect(cls, url: str, **opts: Any) -> "MemgateClient":
        """Open the connection; raises ``MemgateError`` (unauthorized, forbidden, unavailable) when it cannot."""
        client = cls(url, **opts)
        await client._open()
        return client

    async def __aenter__(self) -> "MemgateClient":
        if self._ws is None:
            await self._open()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def session_id(self) -> Optional[str]:
        return self._session["sessionId"] if self._session else None

    async def start(self, agent_id: str, user_id: str, session_id: Optional[str] = None) -> Context:
        """Start (or, with a known ``session_id``, resume) the call: the context for the system prompt."""
        sid = session_id or new_session_id()
        reply = await self._request({"op": "start", "agentId": agent_id, "userId": user_id, "sessionId": sid})
        self._session = {"agentId": agent_id, "userId": user_id, "sessionId": reply["sessionId"]}
        return Context.from_wire(reply)

    async def append(self, role: str, text: str, **turn: Any) -> Ack:
        """Store one turn; returns once it is durable on the server."""
        return await self.append_turn(turn_body(role, text, **turn))

    async def append_turn(self, body: Dict[str, Any]) -> Ack:
        """Store a turn already in wire form (``turnId``, ``asrConfidence``...), as a queue holds it."""
        return Ack.from_wire(await self._request({**body, "op": "append"}))

    async def search(self, query: str, **opts: Any) -> SearchReply:
        """memory_search over the call's user (``k``, ``deadline_ms``, ``as_of``)."""
        return SearchReply.from_wire(await self._request({"op": "search", **search_body(query, **opts)}))

    async def end(self) -> None:
        """End the call: its turns become eligible for extraction."""
        await self._request({"op": "end"})
        self._session = None

    async def ping(self) -> None:
        await self._request({"op": "ping"})

    async def close(self) -> None:
        """Close for good; unanswered requests fail with ``unavailable``."""
        already = self._closed
        self._closed = True
        if self._reconnecting:
            self._reconnecting.cancel()
        self._fail_all(MemgateError("unavailable", "client closed"))
        ws, self._ws = self._ws, None
        if ws is not None:
            await ws.close()
        if self._reader:
            await asyncio.gather(self._reader, return_exceptions=True)
        if not already:
            self._state("closed")

    # --- requests

    async def _request(self, frame: Dict[str, Any], *, restore: bool = False) -> Dict[str, Any]:
        if self._closed:
            raise MemgateError("unavailable", self._closed_reason)
        rid = str(next(self._ids))
        frame["id"] = rid
        future: "asyncio.Future[Dict[str, Any]]" = asyncio.get_running_loop().create_future()
        self._pending[rid] = _Pending(frame, future, restore)
        # While reconnecting the request waits here and is sent once the session is restored.
        if self._ready or restore:
            await self._send(frame)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.request_timeout)
        except asyncio.TimeoutError:
            raise MemgateError("unavailable", f"{frame['op']} not answered within {self.request_timeout} s") from None
        finally:
            self._pending.pop(rid, None)

    async def _send(self, frame: Dict[str, Any]) -> None:
        try:
            await self._ws.send(encode(frame, self.encoding))
        except (ConnectionClosed, AttributeError):
            pass  # The reader sees the close and re-sends what is unanswered.

    def _dispatch(self, data: Any) -> None:
        try:
            msg = decode(data)
        except ValueError:
            return
        if not isinstance(msg, dict) or msg.get("op") == "event":
            return
        pending = self._pending.get(str(msg.get("id")))
        if pending is None or pending.future.done():
            return
        if msg.get("op") == "error":
            pending.future.set_exception(MemgateError(str(msg.get("code", "internal")), str(msg.get("message", ""))))
        else:
            pending.future.set_result({k: v for k, v in msg.items() if k not in ("op", "id")})

    # --- connection

    async def _open(self) -> None:
        ws = await _open_socket(self.url, self.token, self.request_timeout)
        self._ws = ws
        self._reader = asyncio.ensure_future(self._read(ws))
        if self._session:
            try:
                await self._request({"op": "start", **self._session}, restore=True)
            except MemgateError:
                await ws.close()
                raise
        self._ready = True
        # Insertion order is request order: retried appends keep their order, ids and turnIds.
        for pending in list(self._pending.values()):
            if not pending.restore and not pending.future.done():
                await self._send(pending.frame)
        self._state("open")

    async def _read(self, ws: Any) -> None:
        error: Optional[BaseException] = None
        try:
            async for data in ws:
                self._dispatch(data)
        except ConnectionClosed as err:
            error = err
        if self._ws is ws:
            self._on_disconnect(_close_code(ws, error))

    def _on_disconnect(self, code: int) -> None:
        self._ready = False
        for pending in self._pending.values():
            if pending.restore and not pending.future.done():
                pending.future.set_exception(MemgateError("unavailable", "connection lost during session restore"))
        if self._closed or (self._reconnecting and not self._reconnecting.done()):
            return
        if not self.reconnect or code not in RECONNECT_CODES:
            self._give_up(MemgateError("unavailable", f"connection closed with code {code}"))
            return
        self._state("reconnecting")
        self._reconnecting = asyncio.ensure_future(self._reconnect())

    async def _reconnect(self) -> None:
        attempt = 0
        while not self._closed:
            if self.max_attempts is not None and attempt >= self.max_attempts:
                self._give_up(MemgateError("unavailable", f"connection lost; {attempt} reconnect attempts failed"))
                return
            await asyncio.sleep(min(self.max_retry, self.min_retry * 2**attempt))
            attempt += 1
            try:
                await self._open()
                self.reconnects += 1
                return
            except MemgateError as err:
                if err.code in ("unauthorized", "forbidden"):
                    # A refused key will not become valid by retrying.
                    self._give_up(err)
                    return
            except Exception:  # noqa: BLE001 - a protocol surprise on one attempt must not end the reconnect loop
                continue

    def _give_up(self, err: MemgateError) -> None:
        """No more connections: unanswered requests and every later one fail with ``err``."""
        self._closed = True
        self._closed_reason = err.message
        self._fail_all(err)
        self._state("closed")

    def _fail_all(self, err: MemgateError) -> None:
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(err)

    def _state(self, state: str) -> None:
        if self.on_state:
            self.on_state(state)
