"""`croupier serve gateway`: HTTP (uvicorn) and gRPC in one process, one event loop, one core."""

from __future__ import annotations

import asyncio
import signal

import structlog
import uvicorn
from prometheus_client import start_http_server

from croupier.runtime import ListenError, bind_socket
from croupier_gateway.app import create_app
from croupier_gateway.core import Gateway
from croupier_gateway.grpc_api import start_server
from croupier_gateway.settings import GatewaySettings

log = structlog.get_logger("croupier.gateway")

WS_MAX_MESSAGE_BYTES = 16 * 1024  # the largest WebSocket message a client may send


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # the loop below owns the signals
        pass


async def serve(settings: GatewaySettings, ready: asyncio.Event | None = None,
                stop: asyncio.Event | None = None) -> None:
    client = settings.redis_client()
    gateway = Gateway(settings, client)
    app = create_app(settings, gateway=gateway)
    # The HTTP port is bound here, not by uvicorn: a port refused is a ListenError, which
    # `croupier serve gateway` says in one line (uvicorn logged it and raised SystemExit).
    sock = bind_socket(settings.host, settings.port, "HTTP")
    try:
        grpc_server, grpc_port = await start_server(gateway, settings.host, settings.grpc_port)
    except BaseException:
        sock.close()
        await gateway.close()
        await client.aclose()
        raise
    # A WebSocket client sends one small message (its token); uvicorn's defaults would take
    # messages of 16 MiB, compressed (a few KB on the wire inflating to 16 MiB each).
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning", access_log=False,
                            ws_ping_interval=20, ws_ping_timeout=20, lifespan="on", timeout_graceful_shutdown=3,
                            ws_max_size=WS_MAX_MESSAGE_BYTES, ws_per_message_deflate=False,
                            proxy_headers=True, forwarded_allow_ips=settings.forwarded_allow_ips)
    server = _Server(config)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    http_task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if http_task.done():
            await grpc_server.stop(0)
            http_task.result()
            raise RuntimeError("the HTTP server did not start")
        await asyncio.sleep(0.02)
    port = settings.port
    for s in server.servers:
        for sock in s.sockets:
            port = sock.getsockname()[1]
            break
    metrics_server = None
    if settings.metrics_port:
        try:
            metrics_server, _ = start_http_server(settings.metrics_port, addr=settings.host,
                                                  registry=gateway.metrics.registry)
        except OSError as exc:  # a port taken: said as the others are, not as a traceback
            server.should_exit = True
            await grpc_server.stop(0)
            await http_task
            await gateway.close()
            await client.aclose()
            raise ListenError(f"cannot serve metrics on {settings.host}:{settings.metrics_port} "
                              f"(CROUPIER_GATEWAY_METRICS_PORT): {exc.strerror or exc}") from None
    log.info("gateway_serving", http=f"{settings.host}:{port}", grpc=f"{settings.host}:{grpc_port}",
             metrics=f"{settings.host}:{settings.metrics_port}" if metrics_server else "http")
    print(f"croupier gateway serving HTTP on http://{settings.host}:{port} and gRPC on {settings.host}:{grpc_port}",
          flush=True)
    if ready is not None:
        ready.set()
    stopper = asyncio.create_task(stop.wait())
    await asyncio.wait({stopper, http_task}, return_when=asyncio.FIRST_COMPLETED)
    log.info("gateway_stopping")
    server.should_exit = True
    await grpc_server.stop(grace=2)
    await http_task
    stopper.cancel()
    if metrics_server is not None:
        await asyncio.to_thread(metrics_server.shutdown)
        metrics_server.server_close()
    await gateway.close()
    await client.aclose()
