"""The error type of the client: the server's stable codes (docs/protocol.md), kept as-is."""

from __future__ import annotations

from typing import Dict, Optional

#: Every wire code and whether retrying the same request can succeed
#: (mirrors ERROR_CODES in src/core/errors.ts; tests keep them in step).
ERROR_CODES: Dict[str, bool] = {
    "bad_request": False,
    "unauthorized": False,
    "forbidden": False,
    "not_found": False,
    "not_started": False,
    "too_large": False,
    "rate_limited": True,
    "unavailable": True,
    "conflict": False,
    "internal": False,
}


class MemgateError(Exception):
    """A refused or failed request: ``code`` is one of ``ERROR_CODES``, ``status`` the HTTP status when there was one."""

    def __init__(self, code: str, message: str, *, status: Optional[int] = None, retryable: Optional[bool] = None) -> None:
        super().__init__(f"{code}: {message}")
        # A code this client does not know yet (a newer server) is kept, never rewritten.
        self.code = code
        self.message = message
        self.status = status
        self.retryable = ERROR_CODES.get(code, False) if retryable is None else retryable
