"""Frame encodings of the WebSocket: JSON text frames or MessagePack binary frames."""

from __future__ import annotations

import json
from typing import Any, Dict, Union

import msgpack

ENCODINGS = ("json", "msgpack")


def encode(frame: Dict[str, Any], encoding: str) -> Union[str, bytes]:
    if encoding == "msgpack":
        return msgpack.packb(frame, use_bin_type=True)
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def decode(data: Union[str, bytes]) -> Any:
    # Each reply uses its request's encoding, but a binary frame is always MessagePack and a text frame JSON.
    if isinstance(data, (bytes, bytearray)):
        return msgpack.unpackb(data, raw=False)
    return json.loads(data)
