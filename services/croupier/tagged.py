"""Tagged requests over one open bidirectional gRPC stream, both ends.

A message on an open grpc.aio stream costs each side about a third of the CPU of a unary
call (docs/architecture.md, "Moves on a stream"), so the hot requests of Croupier ride
streams: the gateway's moves to a rules replica (`HandleCommands`) and a seat's moves to the
gateway (`Play`). Each request carries a tag chosen by the client; its answer comes back
with the tag as soon as it is ready, in any order.

`TaggedCall` is the client's end: `ask` sends a request and waits for the answer with its
tag. `answer_each` is the server's: it answers each request in a Task of its own and writes
the answers out one at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc


class StreamEnded(Exception):
    """The call ended before the answer came: `error` is its AioRpcError, or None when the
    server ended it (OK) or this side closed it."""

    def __init__(self, error: grpc.aio.AioRpcError | None):
        super().__init__(f"{error.code().name.lower()}: {error.details()}" if error is not None else "the stream ended")
        self.error = error

    @property
    def unimplemented(self) -> bool:
        return self.error is not None and self.error.code() == grpc.StatusCode.UNIMPLEMENTED


class TaggedCall:
    """One open bidirectional call (grpc.aio, read/write API) carrying tagged requests.

    A reader task gives each response whose `answer_tag(response)` is a tag to the request
    waiting for it, and any other response to `on_other`; when the call ends it fails every
    request still waiting with StreamEnded and calls `on_end(error)`. Writes go through one
    writer task, never from the caller: grpc.aio cancels the whole call when a write is
    cancelled, so a caller giving up (a timeout, a client gone) must not cancel a write that
    other requests share."""

    def __init__(self, call: Any, answer_tag: Callable[[Any], int | None], *,
                 on_other: Callable[[Any], None] | None = None,
                 on_end: Callable[[grpc.aio.AioRpcError | None], None] | None = None):
        self.call = call
        self.open = True
        self._answer_tag = answer_tag
        self._on_other = on_other
        self._on_end = on_end
        self._pending: dict[int, asyncio.Future] = {}
        self._outbox: asyncio.Queue = asyncio.Queue()
        self._tag = 0
        self._tasks = [asyncio.ensure_future(self._read()), asyncio.ensure_future(self._write())]

    def send(self, message: Any) -> None:
        """A message that wants no answer (a stream's opening request)."""
        self._outbox.put_nowait(message)

    async def ask(self, build: Callable[[int], Any], timeout_s: float) -> Any:
        """Send build(tag) and return the response with that tag. Raises TimeoutError, or
        StreamEnded when the call ends first."""
        if not self.open:
            raise StreamEnded(None)
        self._tag += 1
        tag = self._tag
        future = asyncio.get_running_loop().create_future()
        self._pending[tag] = future
        self._outbox.put_nowait(build(tag))
        try:
            async with asyncio.timeout(timeout_s):
                return await future
        finally:
            self._pending.pop(tag, None)

    async def _write(self) -> None:
        try:
            while (message := await self._outbox.get()) is not None:
                await self.call.write(message)
        except Exception:  # noqa: BLE001 - the call is over; the reader fails what waits
            pass

    async def _read(self) -> None:
        error = None
        try:
            while (response := await self.call.read()) is not grpc.aio.EOF:
                tag = self._answer_tag(response)
                if tag is None:
                    if self._on_other is not None:
                        self._on_other(response)
                    continue
                future = self._pending.pop(tag, None)
                if future is not None and not future.done():
                    future.set_result(response)
        except grpc.aio.AioRpcError as exc:
            error = exc
        finally:
            self.open = False
            self._outbox.put_nowait(None)
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(StreamEnded(error))
            self._pending.clear()
            if self._on_end is not None:
                self._on_end(error)

    async def close(self) -> None:
        self.call.cancel()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def answer_each(requests: AsyncIterator, answer: Callable[[Any], Awaitable[Any]], *,
                      accept: Callable[[Any], None] | None = None, also: AsyncIterator | None = None,
                      readers: set[asyncio.Task] | None = None,
                      max_in_flight: int | None = None) -> AsyncIterator[Any]:
    """The server's end: yields `await answer(request)` for each request, as each is ready
    (a Task per request, so they run side by side as separate calls would), and the items of
    `also` (other messages, such as a game's updates) as they come.

    Without `also` it ends once the client stops sending and every request is answered; with
    it, once `also` ends and every request taken is answered (requests sent after that are
    not read). `accept(request)` may raise to refuse a request outright, and an exception
    from `also` ends the stream the same way: the caller's handler sees it raised here. The
    reader Task is kept in `readers` while it runs, so that a server shutting down can cancel
    it (the stream then ends once what it took is answered).

    Nothing waits here without bound for a client that does not read: the next item of
    `also` is taken only once the last one has been sent (so an `also` that keeps only its
    newest item, as the gateway's updates do, keeps only that), and with `max_in_flight` no
    more requests are read while that many are being answered or wait to be sent."""
    out: asyncio.Queue = asyncio.Queue()
    state = {"waiting": 0, "open": True}  # open: reading requests (no `also`), or `also` running
    tasks: set[asyncio.Task] = set()
    in_flight = asyncio.Semaphore(max_in_flight) if max_in_flight else None
    also_sent = asyncio.Event()
    ANSWER, ALSO = 0, 1

    def settle() -> None:
        if not state["open"] and not state["waiting"]:
            out.put_nowait(None)

    async def one(request: Any) -> None:
        try:
            out.put_nowait((ANSWER, await answer(request)))
        except Exception as exc:  # noqa: BLE001 - a failure to answer ends the stream with it
            out.put_nowait(exc)
        finally:
            state["waiting"] -= 1
            settle()

    async def read() -> None:
        try:
            async for request in requests:
                if accept is not None:
                    accept(request)
                if in_flight is not None:
                    await in_flight.acquire()  # released once its answer is sent
                state["waiting"] += 1
                task = asyncio.create_task(one(request))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except Exception as exc:  # noqa: BLE001 - refused outright: the stream ends with it
            out.put_nowait(exc)
        finally:
            if also is None:
                state["open"] = False
                settle()

    async def pump() -> None:
        try:
            async for item in also:
                also_sent.clear()
                out.put_nowait((ALSO, item))
                await also_sent.wait()  # the next one only once this one is sent
        except Exception as exc:  # noqa: BLE001 - ends the stream with it
            out.put_nowait(exc)
        finally:
            state["open"] = False
            settle()

    reader = asyncio.create_task(read())
    helpers = [reader] + ([asyncio.create_task(pump())] if also is not None else [])
    if readers is not None:
        readers.add(reader)
    try:
        while (item := await out.get()) is not None:
            if isinstance(item, Exception):
                raise item
            kind, value = item
            yield value
            # Resumed: the consumer has sent it and asks for the next.
            if kind == ALSO:
                also_sent.set()
            elif in_flight is not None:
                in_flight.release()
    finally:
        if readers is not None:
            readers.discard(reader)
        for helper in helpers:
            helper.cancel()
