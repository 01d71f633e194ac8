"""Every call of both clients against a real gateway, on both WebSocket encodings: a short call told as a conversation."""

import asyncio
import uuid

import pytest

from memgate import ERROR_CODES, HttpClient, MemgateClient, MemgateError

AGENT = "real-estate"


def user() -> str:
    return f"py-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_a_call_over_the_websocket_is_remembered_next_call(gateway, encoding):
    async def run():
        caller = user()
        http = HttpClient(gateway.url)
        async with await MemgateClient.connect(gateway.url, encoding=encoding) as ws:
            context = await ws.start(AGENT, caller)
            assert context.session_id == ws.session_id
            assert context.facts == [] and context.tools[0]["function"]["name"] == "memory_search"
            first = await ws.append("user", "Hi, I'm Asha. My budget is 80 lakh rupees.", turn_id="turn-1")
            assert (first.turn_id, first.seq, first.duplicate) == ("turn-1", 1, False)
            again = await ws.append("user", "Hi, I'm Asha. My budget is 80 lakh rupees.", turn_id="turn-1")
            assert (again.seq, again.duplicate) == (1, True)
            await ws.append("agent", "Noted, 80 lakh. Which area?", speaker="Riya")
            found = await ws.search("what is the budget?", k=3, deadline_ms=500)
            assert any("80 lakh" in r.text for r in found.results)
            await ws.end()
            assert ws.session_id is None

        # `end` queued a run: the flush waits for it and reports it, or finds it already committed.
        report = await http.flush(AGENT, caller)
        assert (report.ran and report.turns_read == 2 and report.facts_extracted >= 1) or report.skipped == "up-to-date"
        budget = [e for e in await http.timeline(AGENT, caller) if e.field == "budget"]
        assert [(e.status, e.value["amount"], e.value["currency"]) for e in budget] == [("active", 8_000_000, "INR")]

        async with await MemgateClient.connect(gateway.url, encoding=encoding) as ws:
            context = await ws.start(AGENT, caller)
            assert "budget" in context.context_block
            assert [f.field for f in context.facts if f.field == "budget"] == ["budget"]

    asyncio.run(run())


def test_the_same_call_over_http(gateway):
    async def run():
        caller = user()
        http = HttpClient(gateway.url)
        context = await http.start(AGENT, caller)
        sid = context.session_id
        ack = await http.append(sid, "user", "I want a 3 BHK near Indiranagar, budget 1.2 crore.", turn_id="h-1", ts="2026-12-01T10:00:00Z")
        assert (ack.turn_id, ack.duplicate) == ("h-1", False)
        assert (await http.append(sid, "user", "I want a 3 BHK near Indiranagar, budget 1.2 crore.", turn_id="h-1")).duplicate
        assert [t["turnId"] for t in await http.turns(AGENT, caller)] == ["h-1"]
        await http.end(sid)
        report = await http.flush(AGENT, caller)
        assert report.ran or report.skipped == "up-to-date"
        reply = await http.search(AGENT, caller, "how many bedrooms?", k=2)
        assert reply.results[0].fact["field"] == "bedrooms" and reply.results[0].confidence == "high"
        history = await http.timeline(AGENT, caller, history=True)
        assert {"bedrooms", "budget"} <= {e.field for e in history}
        await http.forget(AGENT, caller)
        assert await http.timeline(AGENT, caller, history=True) == []
        assert (await http.search(AGENT, caller, "budget")).results == []

    asyncio.run(run())


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_refusals_carry_the_stable_codes(gateway, encoding):
    async def run():
        async with await MemgateClient.connect(gateway.url, encoding=encoding) as ws:
            with pytest.raises(MemgateError) as err:
                await ws.append("user", "before any start")
            assert err.value.code == "not_started" and not err.value.retryable
            await ws.start(AGENT, user())
            with pytest.raises(MemgateError) as err:
                await ws.append("user", "x" * (33 * 1024))
            assert err.value.code == "too_large"
            with pytest.raises(MemgateError) as err:
                await ws.search("", k=3)
            assert err.value.code == "bad_request"
            # The connection stays open after an error reply.
            assert (await ws.append("user", "still here")).seq == 1
            await ws.ping()
            with pytest.raises(MemgateError) as err:
                await ws.append("narrator", "not a role")
            assert err.value.code == "bad_request"

    asyncio.run(run())


def test_http_refusals_carry_the_stable_codes_and_statuses(gateway):
    async def run():
        http = HttpClient(gateway.url)
        owner = await http.start(AGENT, user())
        with pytest.raises(MemgateError) as err:
            await http.start(AGENT, user(), session_id=owner.session_id)
        assert (err.value.code, err.value.status) == ("conflict", 409)
        with pytest.raises(MemgateError) as err:
            await http.append("no-such-session", "user", "hello")
        assert err.value.code in ERROR_CODES and err.value.status in (400, 404)
        with pytest.raises(MemgateError) as err:
            await http.search(AGENT, "", "budget")
        assert (err.value.code, err.value.status) == ("bad_request", 400)
        with pytest.raises(MemgateError) as err:
            await HttpClient("http://127.0.0.1:9").flush(AGENT, "nobody")
        assert err.value.code == "unavailable" and err.value.retryable

    asyncio.run(run())


def test_an_unreachable_server_is_unavailable():
    async def run():
        with pytest.raises(MemgateError) as err:
            await MemgateClient.connect("http://127.0.0.1:9", request_timeout=2)
        assert err.value.code == "unavailable"

    asyncio.run(run())
