"""The request bodies both transports share: one place that names the wire fields."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Dict, Optional, Union

from .errors import MemgateError

ROLES = ("user", "agent", "system", "tool")


def new_turn_id() -> str:
    return f"t_{uuid.uuid4()}"


def new_session_id() -> str:
    return f"s_{uuid.uuid4()}"


def wire_time(ts: Union[str, int, float, datetime, None]) -> Union[str, int, float, None]:
    """A ``datetime`` as ISO-8601 (naive ones are taken as UTC by the server); strings and epoch ms pass through."""
    if isinstance(ts, datetime):
        return ts.isoformat()
    return ts


def turn_body(
    role: str,
    text: str,
    *,
    turn_id: Optional[str] = None,
    ts: Union[str, int, float, datetime, None] = None,
    speaker: Optional[str] = None,
    asr_confidence: Optional[float] = None,
    interrupted: Optional[bool] = None,
) -> Dict[str, Any]:
    """An append body. A turn without an id gets one here, so every retry of it is stored once."""
    if role not in ROLES:
        raise MemgateError("bad_request", f"role must be one of {', '.join(ROLES)}, got {role!r}")
    if not isinstance(text, str):
        raise MemgateError("bad_request", "text must be a string")
    body: Dict[str, Any] = {"role": role, "text": text, "turnId": turn_id or new_turn_id()}
    optional = {"ts": wire_time(ts), "speaker": speaker, "asrConfidence": asr_confidence, "interrupted": interrupted}
    body.update({k: v for k, v in optional.items() if v is not None})
    return body


def search_body(query: str, *, k: Optional[int] = None, deadline_ms: Optional[float] = None, as_of: Union[str, int, datetime, None] = None) -> Dict[str, Any]:
    body: Dict[str, Any] = {"query": query}
    optional = {"k": k, "deadlineMs": deadline_ms, "asOf": wire_time(as_of)}
    body.update({key: v for key, v in optional.items() if v is not None})
    return body
