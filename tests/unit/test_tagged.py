"""croupier.tagged on a real in-process grpc.aio stream: answers find their requests by tag
in any order, and each end of a stream ends what waits on it."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from croupier.tagged import StreamEnded, TaggedCall, answer_each


def _tag(message: bytes) -> int:
    return int(message.split(b":", 1)[0])


async def _serve(handler):
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "t.T", {"S": grpc.stream_stream_rpc_method_handler(handler)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    return server, channel, channel.stream_stream("/t.T/S")


def test_answers_come_by_tag_in_any_order_and_the_stream_ends_when_the_client_stops():
    async def answer(message: bytes) -> bytes:
        tag, delay = message.split(b":")
        await asyncio.sleep(float(delay))  # the later requests are answered first
        return tag + b":done"

    async def handler(requests, context):
        async for item in answer_each(requests, answer):
            yield item

    async def main():
        server, channel, method = await _serve(handler)
        try:
            call = TaggedCall(method(), _tag)
            answers = await asyncio.gather(*(call.ask(lambda tag, d=d: b"%d:%s" % (tag, d), 5)
                                             for d in (b"0.3", b"0.2", b"0.1", b"0")))
            await call.call.done_writing()
            code = await call.call.code()
            return answers, code
        finally:
            await channel.close()
            await server.stop(0)

    answers, code = asyncio.run(main())
    assert answers == [b"1:done", b"2:done", b"3:done", b"4:done"] and code == grpc.StatusCode.OK


def test_with_another_source_the_stream_ends_with_it_once_the_waiting_requests_are_answered():
    async def handler(requests, context):
        async def updates():
            yield b"u:first"
            await asyncio.sleep(0.2)  # the request below arrives meanwhile and takes longer

        async def answer(message: bytes) -> bytes:
            await asyncio.sleep(0.4)
            return message.split(b":")[0] + b":late"

        async for item in answer_each(requests, answer, also=updates()):
            yield item

    async def main():
        server, channel, method = await _serve(handler)
        others, ended = [], asyncio.get_running_loop().create_future()
        try:
            call = TaggedCall(method(), lambda m: None if m.startswith(b"u:") else _tag(m),
                              on_other=others.append, on_end=ended.set_result)
            answer = await call.ask(lambda tag: b"%d:x" % tag, 5)
            error = await ended
            with pytest.raises(StreamEnded):  # nothing is read after the end
                await call.ask(lambda tag: b"%d:x" % tag, 5)
            return others, answer, error
        finally:
            await channel.close()
            await server.stop(0)

    others, answer, error = asyncio.run(main())
    assert others == [b"u:first"] and answer == b"1:late" and error is None


def test_a_request_refused_outright_ends_the_stream_and_fails_what_waits():
    class Refused(Exception):
        pass

    async def handler(requests, context):
        def accept(message: bytes) -> None:
            if message.endswith(b":bad"):
                raise Refused("bad")

        async def answer(message: bytes) -> bytes:
            await asyncio.sleep(10)  # never answered in time: the refusal ends the stream first
            return message

        try:
            async for item in answer_each(requests, answer, accept=accept):
                yield item
        except Refused:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "bad request")

    async def main():
        server, channel, method = await _serve(handler)
        try:
            call = TaggedCall(method(), _tag)
            waiting = asyncio.ensure_future(call.ask(lambda tag: b"%d:slow" % tag, 5))
            await asyncio.sleep(0.1)
            call.send(b"0:bad")
            with pytest.raises(StreamEnded) as ended:
                await waiting
            return ended.value.error.code()
        finally:
            await channel.close()
            await server.stop(0)

    assert asyncio.run(main()) == grpc.StatusCode.INVALID_ARGUMENT


def test_a_consumer_that_does_not_read_holds_back_the_other_source_and_the_requests():
    """A stream whose client does not read: the other source's next item is taken only once
    the last was sent, and with max_in_flight no more requests are read than that many
    waiting (the gateway's Play: before, a stalled stream buffered every update and move)."""
    pulled = {"also": 0, "read": 0}

    async def main():
        async def updates():
            for i in range(1000):
                pulled["also"] += 1
                yield ("update", i)

        async def requests():
            for i in range(1000):
                pulled["read"] += 1
                yield i

        async def answer(request):
            return ("answer", request)

        stream = answer_each(requests(), answer, also=updates(), max_in_flight=8)
        first = [await anext(stream) for _ in range(3)]  # the client reads three, then stalls
        await asyncio.sleep(0.2)
        seen = dict(pulled)
        rest = []
        async for item in stream:  # then reads on: everything still comes
            rest.append(item)
        return first, seen, first + rest

    first, stalled, everything = asyncio.run(main())
    assert stalled["also"] <= 4, stalled  # the items sent, and one more waiting to go
    assert stalled["read"] <= 3 + 8 + 1, stalled
    answers = sorted(v for k, v in everything if k == "answer")
    assert answers == list(range(len(answers))) and answers  # each request taken is answered once
    assert [v for k, v in everything if k == "update"] == list(range(1000))
