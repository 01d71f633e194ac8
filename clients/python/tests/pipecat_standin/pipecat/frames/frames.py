"""Stand-in for pipecat.frames.frames (see ../../README.md)."""

import itertools
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Optional

_ids = itertools.count(1)


@dataclass
class Frame:
    """Every Pipecat frame has a unique ``id`` and a ``name``."""

    id: int = field(init=False, compare=False, default_factory=lambda: next(_ids))

    @property
    def name(self) -> str:
        return f"{type(self).__name__}#{self.id}"


@dataclass
class TextFrame(Frame):
    """Text, e.g. an LLM's streamed reply (Pipecat's LLMTextFrame is one)."""

    text: str


@dataclass
class TranscriptionFrame(TextFrame):
    """What the STT heard from one user."""

    user_id: str
    timestamp: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat())
    language: Optional[str] = None


@dataclass
class LLMFullResponseStartFrame(Frame):
    pass


@dataclass
class LLMFullResponseEndFrame(Frame):
    pass


@dataclass
class EndFrame(Frame):
    pass
