"""The README's Pipecat example, run as written against a stand-in of Pipecat's frame API and a real gateway."""

import asyncio
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

from gateway import REPO

from memgate import HttpClient

sys.path.insert(0, str(Path(__file__).resolve().parent / "pipecat_standin"))

from pipecat.frames.frames import EndFrame, LLMFullResponseEndFrame, LLMFullResponseStartFrame, TextFrame, TranscriptionFrame  # noqa: E402
from pipecat.processors.frame_processor import FrameDirection, FrameSink  # noqa: E402


def readme_example() -> dict:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- pipecat-example -->\s*```python\n(.*?)```", text, re.S)
    assert block, "README.md lost its Pipecat example"
    namespace: dict = {}
    exec(compile(block.group(1), "README.md#pipecat-example", "exec"), namespace)
    return namespace


def test_the_readme_pipecat_processor_stores_the_call(gateway, monkeypatch):
    monkeypatch.setenv("MEMGATE_URL", gateway.url)
    example = readme_example()

    async def run():
        session, prompt = await example["memory_for_call"]("caller-pipecat")
        assert prompt.startswith("You are a property advisor.")
        after_stt, after_llm, sink = example["MemgateMemory"](session), example["MemgateMemory"](session), FrameSink()
        after_stt.link(after_llm)
        after_llm.link(sink)
        frames = [
            TranscriptionFrame("Hi, I'm Asha, my budget is 80 lakh rupees.", "caller-pipecat", "2026-12-05T10:00:00Z"),
            LLMFullResponseStartFrame(),
            TextFrame("Noted, "),
            TextFrame("80 lakh."),
            LLMFullResponseEndFrame(),
        ]
        for frame in frames:
            await after_stt.process_frame(frame, FrameDirection.DOWNSTREAM)
        assert sink.frames == frames  # the processor passes every frame on

        # Each turn passed both processors: two appends each, the second acked as a duplicate.
        for _ in range(200):
            if session.delivered == 4:
                break
            await asyncio.sleep(0.05)
        http = HttpClient(gateway.url)
        turns = await http.turns("real-estate", "caller-pipecat")
        assert [(t["role"], t["text"]) for t in turns] == [("user", "Hi, I'm Asha, my budget is 80 lakh rupees."), ("agent", "Noted, 80 lakh.")]
        assert turns[0]["speaker"] == "caller-pipecat" and turns[0]["ts"] == datetime(2026, 12, 5, 10, tzinfo=timezone.utc).timestamp() * 1000

        await after_stt.process_frame(EndFrame(), FrameDirection.DOWNSTREAM)
        assert isinstance(sink.frames[-1], EndFrame)
        await http.flush("real-estate", "caller-pipecat")
        assert [e.value["amount"] for e in await http.timeline("real-estate", "caller-pipecat") if e.field == "budget"] == [8_000_000]

    asyncio.run(run())
