"""A gateway that goes away mid-call: the client resumes the same session and every turn is stored once."""

import asyncio
import signal

import pytest

from memgate import HttpClient, MemgateClient, MemgateError

AGENT = "real-estate"


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_a_crash_mid_call_resends_unacked_turns_once(own_gateway, encoding):
    async def run():
        states = []
        ws = await MemgateClient.connect(own_gateway.url, encoding=encoding, request_timeout=30, min_retry=0.05, on_state=states.append)
        context = await ws.start(AGENT, "caller-crash")
        assert (await ws.append("user", "My name is Asha.", turn_id="c-1")).seq == 1

        # Frozen, the server takes the frame into its socket buffer and never answers it.
        own_gateway.proc.send_signal(signal.SIGSTOP)
        unacked = asyncio.ensure_future(ws.append("user", "My budget is 80 lakh.", turn_id="c-2"))
        await asyncio.sleep(0.3)
        assert not unacked.done()
        # Then it crashes (the socket dies with 1006) and comes back on the same port and data file.
        await asyncio.get_running_loop().run_in_executor(None, own_gateway.restart, signal.SIGKILL)

        ack = await unacked
        assert (ack.turn_id, ack.seq, ack.duplicate) == ("c-2", 2, False)
        # A turn the old server had acked, sent again after the restart, is the first one.
        again = await ws.append("user", "My name is Asha.", turn_id="c-1")
        assert (again.seq, again.duplicate) == (1, True)
        assert ws.session_id == context.session_id and ws.reconnects == 1
        assert states[:2] == ["open", "reconnecting"] and states[-1] == "open"
        await ws.close()

        turns = await HttpClient(own_gateway.url).turns(AGENT, "caller-crash")
        assert [(t["turnId"], t["seq"], t["sessionId"]) for t in turns] == [("c-1", 1, context.session_id), ("c-2", 2, context.session_id)]

    asyncio.run(run())


def test_a_graceful_shutdown_closes_with_1001_and_the_client_tries_again(own_gateway):
    # Restarting on the same port right after a graceful shutdown is not possible: the server's
    # closed connections hold the port in TIME_WAIT for a minute. The crash test above covers the
    # resumed call; this one checks that 1001 is taken as "come back later", not as the end.
    async def run():
        states = []
        ws = await MemgateClient.connect(own_gateway.url, request_timeout=30, min_retry=0.05, on_state=states.append)
        await ws.start(AGENT, "caller-drain")
        await asyncio.get_running_loop().run_in_executor(None, own_gateway.stop, signal.SIGTERM)
        for _ in range(200):
            if "reconnecting" in states:
                break
            await asyncio.sleep(0.05)
        await ws.close()
        assert states == ["open", "reconnecting", "closed"]

    asyncio.run(run())


def test_a_normal_close_is_not_reconnected(own_gateway):
    async def run():
        ws = await MemgateClient.connect(own_gateway.url, request_timeout=5)
        await ws.close()
        assert ws.reconnects == 0
        with pytest.raises(MemgateError) as err:
            await ws.append("user", "after close")
        assert err.value.code == "unavailable"

    asyncio.run(run())


def test_a_close_code_that_is_not_transient_ends_the_client(gateway):
    async def run():
        states = []
        ws = await MemgateClient.connect(gateway.url, request_timeout=10, min_retry=0.05, on_state=states.append)
        await ws.start(AGENT, "caller-1009")
        # A frame over the server's 1 MiB limit: it closes the connection with 1009.
        with pytest.raises(MemgateError) as err:
            await ws.append("user", "x" * (1100 * 1024))
        assert err.value.code == "unavailable" and "1009" in err.value.message
        with pytest.raises(MemgateError) as err:
            await ws.append("user", "after the close")
        assert "1009" in err.value.message
        assert ws.reconnects == 0 and states == ["open", "closed"]
        await ws.close()
        assert states == ["open", "closed"]

    asyncio.run(run())
