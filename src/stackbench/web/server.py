"""Running the app under uvicorn, and the rule on which addresses it may listen."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Sequence

from stackbench.base.errors import StackbenchError, UsageError
from stackbench.web.headers import SecurityHeaders

THREADS_PER_WORKER = 2  # `serve --threads`: see ThreadLimit


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to anything


def check_host(host: str, accounts: int) -> None:
    """Refuse to listen beyond this machine while the server has no account: nobody could log in, and an
    open port with no way in invites the first default someone adds."""
    if accounts == 0 and not is_loopback(host):
        raise UsageError(
            f"refusing to listen on {host}: the server has no account yet, so it binds only to 127.0.0.1",
            "Create one first with `stackbench user add NAME --admin`, or leave out --host",
        )


def allowed_hosts(values: Sequence[str]) -> tuple[str, ...]:
    """`--allowed-host` values (each may be a comma-separated list) as the server compares them; one
    line naming the first that is not a host name or an address."""
    from stackbench.web.origin import allowed_host_name

    names = [name for value in values for name in value.split(",") if name.strip()]
    try:
        return tuple(dict.fromkeys(allowed_host_name(name) for name in names))
    except ValueError as error:
        raise UsageError(f"--allowed-host: {error}", "Pass host names such as bench.example.org") from None


def check_port(host: str, port: int) -> None:
    """Fail with one line before uvicorn starts when the address cannot be bound (uvicorn would log a
    traceback-like error and exit)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as error:
            raise StackbenchError(f"cannot listen on {host} port {port}: {error.strerror}",
                                  "Choose another --port, or stop what listens there") from None


def uvicorn_config(app: Any, host: str, port: int, forwarded_allow_ips: str | None = None, workers: int = 1,
                   threads: int = THREADS_PER_WORKER) -> Any:
    """uvicorn's settings: no Server banner, our access log instead of uvicorn's (which would log share
    tokens), proxy headers trusted only from the addresses given (none by default). `app` is the app
    itself for one process, or a `WorkerApp` that each of several worker processes calls to build its own."""
    import uvicorn

    from stackbench.web.logs import install_last_resort, log_config

    install_last_resort()
    return uvicorn.Config(
        app if isinstance(app, WorkerApp) else ThreadLimit(SecurityHeaders(app), threads),
        factory=isinstance(app, WorkerApp),
        workers=workers, host=host, port=port, server_header=False, access_log=False,
        proxy_headers=forwarded_allow_ips is not None, forwarded_allow_ips=forwarded_allow_ips,
        log_level="info", lifespan="off", log_config=log_config(),  # every log line one line (web/logs.py)
    )


@dataclass(frozen=True)
class WorkerApp:
    """How a worker process of `serve --workers N` builds its app. uvicorn starts the workers as new
    interpreters and hands each this factory (pickled), never a live store: each opens its own engine.
    Everything the workers must agree on lives in the store (the server's key, sessions, share links,
    the rate-limit counts, the charts kept on disk); only the charts kept in memory are per process."""

    db_url: str
    threads: int = THREADS_PER_WORKER
    settings: Any = None  # the server's web.settings.Settings (a dataclass of plain values: pickled whole)

    def __call__(self) -> Any:
        from stackbench.store import open_store
        from stackbench.web.app import create_app
        from stackbench.web.logs import install_last_resort
        install_last_resort()  # uvicorn configured this worker's loggers from log_config() before calling us
        app = ThreadLimit(SecurityHeaders(create_app(open_store(self.db_url), self.settings)), self.threads)
        settle_heap()
        return app


class ThreadLimit:
    """At most `threads` requests of this process run their route at once; the others wait in the event
    loop, in arrival order.

    The routes are synchronous Python (FastAPI runs them in a thread pool) and mostly CPU work under one
    interpreter lock. With the pool's default of 40 threads, 20 busy clients meant 20 threads taking the
    lock in turns of 5 ms and the event loop that answers them waiting behind: with 10,000 runs and 20
    clients on 2 workers, p95 89-151 ms with 40 threads against 59-109 ms with 2 (bench/RESULTS.md,
    "Server pages under load"). The price: a slow request (a chart drawn for the first time, an upload
    parsed) holds one of the few threads while it lasts."""

    def __init__(self, app: Any, threads: int = THREADS_PER_WORKER) -> None:
        self.app, self.threads, self._set = app, threads, False

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if not self._set:  # the limiter belongs to the running event loop: set on its first request
            import anyio.to_thread

            anyio.to_thread.current_default_thread_limiter().total_tokens = self.threads
            self._set = True
        await self.app(scope, receive, send)


def serve(config: Any) -> None:
    """Run uvicorn with `config`: one process, or a supervisor over `config.workers` processes sharing
    one listening socket (uvicorn's own, which restarts a worker that dies)."""
    import uvicorn

    if config.workers > 1:
        import inspect

        from uvicorn.supervisors import Multiprocess

        sockets = [config.bind_socket()]
        if "target" in inspect.signature(Multiprocess).parameters:  # older uvicorn: it takes the target
            Multiprocess(config, target=uvicorn.Server(config).run, sockets=sockets).run()
        else:
            Multiprocess(config, sockets=sockets).run()
    else:
        settle_heap()  # the app is built (the workers' own call it when they have built theirs)
        uvicorn.Server(config).run()


def settle_heap() -> None:
    """Put every object the process holds once the app is built (the imported modules, the app and its
    store) out of reach of the garbage collector's scans.

    Requests allocate enough for the collector to run every few of them, and now and then (every 30 s
    or so under load) a full collection, which walked all ~150,000 objects of the process: a 47-86 ms
    pause of every request of the process on the bench machine. `gc.freeze` makes the collector skip
    them (they live as long as the process anyway): full collections then take 15-24 ms (the modules the
    first requests import, the templates they compile, are not frozen), and the collector's time per
    request falls from ~60 to ~30 us. What requests create is collected as before."""
    import gc

    gc.collect()
    gc.freeze()
