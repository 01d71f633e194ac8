"""A call's memory for a voice pipeline that must never wait for it (the Python twin of src/integrations/resilient-call.ts)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Dict, List, Optional

from .errors import MemgateError
from .turns import new_session_id, turn_body
from .types import Context, SearchReply
from .ws import MemgateClient

log = logging.getLogger("memgate")

#: Appends sent at once from the head of the queue (one WebSocket keeps them in order).
BATCH = 64


class ResilientSession:
    """
    One call's memory, built so that memgate being slow or down never holds the agent up.

    - ``start()`` waits at most ``start_timeout`` seconds for the context; past it the call
      starts without memory (``None``) and the session keeps trying in the background.
    - ``append()`` is a plain function that returns at once: the turn joins a bounded queue
      delivered in order by a background task, retried with the same ``turnId`` (stored once).
    - **Drop rule**: the queue holds at most ``max_queued_turns``; past it the *oldest* queued
      turns are dropped (counted in ``dropped``): the newest turns are what the caller just
      said, and the call's own context already holds the older ones.
    - **Logging**: one warning when memory becomes degraded, one when a degraded spell first
      drops turns, one info line when memgate answers again; never a line per turn.
    - ``search()`` answers ``None`` instead of raising while degraded or past its deadline.
    """

    def __init__(
        self,
        url: str,
        *,
        agent_id: str,
        user_id: str,
        session_id: Optional[str] = None,
        token: Optional[str] = None,
        encoding: str = "json",
        max_queued_turns: int = 1000,
        start_timeout: float = 1.0,
        request_timeout: float = 3.0,
        min_retry: float = 0.2,
        max_retry: float = 5.0,
        logger: Optional[logging.Logger] = None,
    ) -> None:
        if max_queued_turns < 1:
            raise MemgateError("bad_request", "max_queued_turns must be at least 1")
        self.url = url
        self.agent_id = agent_id
        self.user_id = user_id
        #: Reused on every reconnect, so a restored call is the same session.
        self.session_id = session_id or new_session_id()
        self.token = token
        self.encoding = encoding
        self.max_queued_turns = max_queued_turns
        self.start_timeout = start_timeout
        self.request_timeout = request_timeout
        self.min_retry = min_retry
        self.max_retry = max_retry
        self.log = logger or log
        self.context: Optional[Context] = None
        self.delivered = 0
        self.dropped = 0
        self._queue: List[Dict[str, Any]] = []
        self._client: Optional[MemgateClient] = None
        self._connecting: Optional["asyncio.Task[Optional[MemgateClient]]"] = None
        self._pump: Optional["asyncio.Task[None]"] = None
        self._retry = min_retry
        self._degraded = False
        self._dropped_this_spell = False
        self._ending = False
        self._closed = False

    @property
    def degraded(self) -> bool:
        return self._degraded

    @property
    def queued(self) -> int:
        return len(self._queue)

    async def start(self) -> Optional[Context]:
        """Connect and start the call; the context, or ``None`` when memgate did not answer in time."""
        task = self._connect()
        try:
            client = await asyncio.wait_for(asyncio.shield(task), self.start_timeout)
        except asyncio.TimeoutError:
            client = None
        if client is None:
            self._mark_degraded(MemgateError("unavailable", f"no context within {self.start_timeout} s"))
        return self.context if client else None

    def append(self, role: str, text: str, **turn: Any) -> None:
        """Queue a turn and return at once (call from the event loop's thread)."""
        if self._ending or self._closed:
            self.log.warning("memgate: turn after the call ended, not stored")
            return
        self._queue.append(turn_body(role, text, **turn))
        overflow = len(self._queue) - self.max_queued_turns
        if overflow > 0:
            del self._queue[:overflow]
            self.dropped += overflow
            if not self._dropped_this_spell:
                self._dropped_this_spell = True
                self.log.warning("memgate: turn queue full (%d), dropping the oldest turns until memgate answers", self.max_queued_turns)
        self._kick()

    async def search(self, query: str, *, deadline_ms: float = 300, k: Optional[int] = None, grace: float = 0.15) -> Optional[SearchReply]:
        """memory_search within ``deadline_ms`` (+ ``grace`` seconds of network); ``None`` when memgate is down or late."""
        client = self._client
        if client is None or self._degraded:
            if client is None and not self._ending:
                self._connect()
            return None
        try:
            return await asyncio.wait_for(client.search(query, k=k, deadline_ms=deadline_ms), deadline_ms / 1000 + grace)
        except (MemgateError, asyncio.TimeoutError) as err:
            self.log.warning("memgate: memory_search failed: %s", err)
            return None

    async def end(self, timeout: float = 5.0) -> None:
        """Deliver the queue (within ``timeout``), end the call so extraction runs, close. Idempotent."""
        if self._ending:
            return
        self._ending = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        ended = False
        while not ended and loop.time() < deadline:
            if self._queue:
                self._kick()
                await asyncio.sleep(0.02)
                continue
            client = self._client or await self._wait(self._connect(), deadline - loop.time())
            if client is not None:
                try:
                    await asyncio.wait_for(client.end(), max(0.0, deadline - loop.time()))
                    ended = True
                except (MemgateError, asyncio.TimeoutError) as err:
                    self._mark_degraded(err)
            if not ended:
                await asyncio.sleep(min(self._retry, max(0.0, deadline - loop.time())))
        if not ended:
            self.log.warning("memgate: call closed before memory caught up; %d undelivered turns are lost", len(self._queue))
        self._closed = True
        self._queue.clear()
        if self._pump:
            self._pump.cancel()
        if self._client:
            await self._client.close()
            self._client = None

    # --- delivery

    def _kick(self) -> None:
        if self._pump is None or self._pump.done():
            self._pump = asyncio.ensure_future(self._deliver())

    async def _deliver(self) -> None:
        while self._queue and not self._closed:
            client = await self._connect()
            if client is None:
                await self._backoff()
                continue
            batch = self._queue[:BATCH]
            results = await asyncio.gather(*(client.append_turn(t) for t in batch), return_exceptions=True)
            failure: Optional[BaseException] = None
            for turn, result in zip(batch, results):
                if not isinstance(result, BaseException):
                    self._settle(turn)
                elif isinstance(result, MemgateError) and not result.retryable and result.code != "not_started":
                    # A turn memgate refuses (too large, malformed) will never be stored.
                    self._settle(turn)
                    self.log.warning("memgate: turn %s refused (%s), not stored", turn.get("turnId"), result.code)
                else:
                    failure = failure or result
            if failure is None:
                self._mark_healthy()
                continue
            if isinstance(failure, MemgateError) and failure.code == "not_started":
                await self._drop_client()
            self._mark_degraded(failure)
            await self._backoff()

    def _settle(self, turn: Dict[str, Any]) -> None:
        for i, queued in enumerate(self._queue):
            if queued is turn:
                del self._queue[i]
                self.delivered += 1
                return

    def _connect(self) -> "asyncio.Task[Optional[MemgateClient]]":
        if self._connecting is None or self._connecting.done():
            self._connecting = asyncio.ensure_future(self._open())
        return self._connecting

    async def _open(self) -> Optional[MemgateClient]:
        if self._client is not None:
            return self._client
        client: Optional[MemgateClient] = None
        try:
            client = await MemgateClient.connect(
                self.url,
                token=self.token,
                encoding=self.encoding,
                request_timeout=self.request_timeout,
                min_retry=self.min_retry,
                max_retry=self.max_retry,
                on_state=self._on_state,
            )
            context = await client.start(self.agent_id, self.user_id, self.session_id)
            self.context = self.context or context
            if self._closed:
                await client.close()
                return None
            self._client = client
            self._mark_healthy()
            if self._queue:
                self._kick()
            return client
        except MemgateError as err:
            if client is not None:
                await client.close()
            self._mark_degraded(err)
            return None

    def _on_state(self, state: str) -> None:
        if state == "reconnecting":
            self._mark_degraded(MemgateError("unavailable", "connection lost"))
        elif state == "open" and self._client is not None:
            # Restored: the client re-sent every unanswered append itself.
            self._mark_healthy()

    async def _drop_client(self) -> None:
        client, self._client = self._client, None
        if client:
            await client.close()

    async def _backoff(self) -> None:
        await asyncio.sleep(self._retry)
        self._retry = min(self.max_retry, self._retry * 2)

    @staticmethod
    async def _wait(task: "asyncio.Task[Optional[MemgateClient]]", timeout: float) -> Optional[MemgateClient]:
        try:
            return await asyncio.wait_for(asyncio.shield(task), max(0.0, timeout))
        except asyncio.TimeoutError:
            return None

    def _mark_degraded(self, err: BaseException) -> None:
        if self._degraded or self._closed:
            return
        self._degraded = True
        self.log.warning("memgate: memory degraded (%s); turns are queued and the agent continues without it", err)

    def _mark_healthy(self) -> None:
        self._retry = self.min_retry
        if not self._degraded:
            return
        self._degraded = False
        self._dropped_this_spell = False
        self.log.info("memgate: memory restored (%d delivered, %d queued, %d dropped)", self.delivered, len(self._queue), self.dropped)
