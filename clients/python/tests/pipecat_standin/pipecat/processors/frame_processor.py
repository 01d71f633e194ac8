"""Stand-in for pipecat.processors.frame_processor (see ../../README.md)."""

from enum import Enum
from typing import List, Optional

from pipecat.frames.frames import Frame


class FrameDirection(Enum):
    DOWNSTREAM = 1
    UPSTREAM = 2


class FrameProcessor:
    def __init__(self, *, name: Optional[str] = None) -> None:
        self.name = name or type(self).__name__
        self._next: Optional["FrameProcessor"] = None
        self._prev: Optional["FrameProcessor"] = None

    def link(self, processor: "FrameProcessor") -> None:
        self._next = processor
        processor._prev = self

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        """Subclasses call this first, as in Pipecat."""

    async def push_frame(self, frame: Frame, direction: FrameDirection = FrameDirection.DOWNSTREAM) -> None:
        target = self._next if direction == FrameDirection.DOWNSTREAM else self._prev
        if target is not None:
            await target.process_frame(frame, direction)


class FrameSink(FrameProcessor):
    """Not Pipecat's: the end of a test pipeline, keeping what reached it."""

    def __init__(self) -> None:
        super().__init__()
        self.frames: List[Frame] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        self.frames.append(frame)
