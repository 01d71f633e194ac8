"""The agent-side queue: appends never wait for memgate, the bound drops the oldest turns, degradation is logged once."""

import asyncio
import logging
import signal

from memgate import HttpClient, ResilientSession

AGENT = "real-estate"


async def until(check, tries=400):
    for _ in range(tries):
        if check():
            return True
        await asyncio.sleep(0.05)
    return False


def test_a_call_while_memgate_is_down_keeps_the_newest_turns_within_the_bound(own_gateway, caplog):
    async def run():
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, own_gateway.stop, signal.SIGKILL)
        session = ResilientSession(own_gateway.url, agent_id=AGENT, user_id="caller-queue", max_queued_turns=3, start_timeout=0.5, request_timeout=5, min_retry=0.05, max_retry=0.2)
        assert await session.start() is None and session.degraded
        assert await session.search("budget") is None

        for i in range(10):
            assert session.append("user", f"turn number {i}", turn_id=f"q-{i}") is None
        assert (session.queued, session.dropped) == (3, 7)

        await loop.run_in_executor(None, own_gateway.start)
        assert await until(lambda: session.queued == 0 and session.delivered == 3)
        assert not session.degraded and session.context is not None
        turns = await HttpClient(own_gateway.url).turns(AGENT, "caller-queue")
        assert [t["turnId"] for t in turns] == ["q-7", "q-8", "q-9"]
        assert {t["sessionId"] for t in turns} == {session.session_id}
        await session.end()

        warnings = [r.getMessage() for r in caplog.records if r.name == "memgate" and r.levelno == logging.WARNING]
        assert sum("degraded" in w for w in warnings) == 1
        assert sum("queue full" in w for w in warnings) == 1

    with caplog.at_level(logging.INFO, logger="memgate"):
        asyncio.run(run())
    assert any("memory restored" in r.getMessage() for r in caplog.records)


def test_a_healthy_call_delivers_in_order_and_ends(gateway):
    async def run():
        session = ResilientSession(gateway.url, agent_id=AGENT, user_id="caller-ok", encoding="msgpack")
        context = await session.start()
        assert context is not None and context.session_id == session.session_id
        for i in range(5):
            session.append("user" if i % 2 == 0 else "agent", f"line {i}", turn_id=f"ok-{i}")
        assert await until(lambda: session.delivered == 5)
        turns = await HttpClient(gateway.url).turns(AGENT, "caller-ok")
        assert [t["turnId"] for t in turns] == [f"ok-{i}" for i in range(5)]
        assert (await session.search("line", deadline_ms=500)) is not None
        await session.end()
        session.append("user", "too late")
        assert session.queued == 0

    asyncio.run(run())
