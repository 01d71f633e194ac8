"""memgate over HTTP with the standard library: each request runs urllib in a worker thread."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional
from urllib.parse import quote

from .errors import MemgateError
from .turns import new_session_id, search_body, turn_body
from .types import Ack, Context, Entity, FlushReport, SearchReply

# A reply without memgate's error body (a proxy, a crash page) still gets a stable code.
_STATUS_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 409: "conflict", 413: "too_large", 429: "rate_limited", 503: "unavailable"}


def _seg(value: str) -> str:
    return quote(value, safe="")


class HttpClient:
    """Every HTTP route a voice app needs, as coroutines: start, append, search, end, flush, timeline, forget."""

    def __init__(self, url: str, *, token: Optional[str] = None, timeout: float = 30.0) -> None:
        self.base = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    async def start(self, agent_id: str, user_id: str, session_id: Optional[str] = None) -> Context:
        body = {"agentId": agent_id, "userId": user_id, "sessionId": session_id or new_session_id()}
        return Context.from_wire(await self._call("POST", "/v1/sessions", body))

    async def append(self, session_id: str, role: str, text: str, **turn: Any) -> Ack:
        return Ack.from_wire(await self._call("POST", f"/v1/sessions/{_seg(session_id)}/turns", turn_body(role, text, **turn)))

    async def search(self, agent_id: str, user_id: str, query: str, **opts: Any) -> SearchReply:
        body = {"agentId": agent_id, "userId": user_id, **search_body(query, **opts)}
        return SearchReply.from_wire(await self._call("POST", "/v1/search", body))

    async def end(self, session_id: str) -> None:
        await self._call("POST", f"/v1/sessions/{_seg(session_id)}/end")

    async def flush(self, agent_id: str, user_id: str) -> FlushReport:
        return FlushReport.from_wire(await self._call("POST", f"{self._user(agent_id, user_id)}/flush"))

    async def timeline(self, agent_id: str, user_id: str, *, history: bool = False) -> List[Entity]:
        reply = await self._call("GET", f"{self._user(agent_id, user_id)}/entities" + ("?history=true" if history else ""))
        return [Entity.from_wire(e) for e in reply["entities"]]

    async def turns(self, agent_id: str, user_id: str) -> List[Dict[str, Any]]:
        """Buffered turns not yet extracted (audits, tests)."""
        return (await self._call("GET", f"{self._user(agent_id, user_id)}/turns"))["turns"]

    async def forget(self, agent_id: str, user_id: str) -> None:
        await self._call("DELETE", self._user(agent_id, user_id))

    @staticmethod
    def _user(agent_id: str, user_id: str) -> str:
        return f"/v1/agents/{_seg(agent_id)}/users/{_seg(user_id)}"

    async def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        return await asyncio.get_running_loop().run_in_executor(None, self._call_sync, method, path, body)

    def _call_sync(self, method: str, path: str, body: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("content-type", "application/json")
        if self.token:
            req.add_header("authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                raw = res.read()
        except urllib.error.HTTPError as err:
            raise _http_error(err.code, err.read()) from None
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise MemgateError("unavailable", f"cannot reach memgate at {self.base}: {reason}") from err
        return json.loads(raw) if raw else {}


def _http_error(status: int, raw: bytes) -> MemgateError:
    try:
        error = json.loads(raw)["error"]
        return MemgateError(str(error["code"]), str(error.get("message", "")), status=status)
    except (ValueError, KeyError, TypeError):
        code = _STATUS_CODES.get(status, "internal" if status >= 500 else "bad_request")
        return MemgateError(code, f"HTTP {status}: {raw[:200].decode('utf-8', 'replace')}", status=status)
