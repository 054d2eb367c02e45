"""A real gateway for the tests: `tracehouse serve` in a process of its own, on a free loopback
port, stopped (or killed) by the test."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tracehouse.gateway.tokens import add_token
from tracehouse.store import open_store
from tracehouse.store.remote.store import address_with


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ledger_with_tokens(address: str, tokens: dict[str, tuple[str, str]]) -> dict[str, str]:
    """A ledger at `address` holding tokens, {key: (name, scope)}; returns {key: token}."""
    store = open_store(address)
    try:
        return {key: add_token(store, name, scope) for key, (name, scope) in tokens.items()}
    finally:
        store.close()


def ledger_address(request: Any, tmp_path: Path) -> str:
    """Where a test parametrized over the two stores keeps its ledger (`request.param`)."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_schemas")())
    return str(tmp_path / "gateway.db")


def make_token(store_address: str, directory: Path, name: str, scope: str) -> Path:
    """A token in a file of its own, as a teammate keeps it."""
    store = open_store(store_address)
    try:
        token = add_token(store, name, scope)
    finally:
        store.close()
    path = directory / f"{name}.token"
    path.write_text(token + "\n")
    path.chmod(0o600)
    return path


@dataclass
class Gateway:
    store: str
    log: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Gateway:
        """The gateway, answering. A free port can be taken by another test's process between
        `free_port` and the gateway's bind: then it starts again on another."""
        for _ in range(5):
            if self._started():
                return self
            self.port = free_port()
        raise RuntimeError(f"no free port held: {self.log.read_text()[-2000:]}")

    def _started(self) -> bool:
        command = [sys.executable, "-m", "tracehouse.cli.app", "serve", "--store", self.store,
                   "--port", str(self.port)]  # fmt: skip
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=log, env=dict(os.environ))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/v1/health", timeout=1).status_code == 200:
                    return True
            except httpx.TransportError:
                pass
            if self.process.poll() is not None:
                said = self.log.read_text()[-2000:]
                if "address already in use" in said.rsplit("tracehouse gateway on", 1)[-1]:
                    return False
                raise RuntimeError(f"the gateway exited: {said}")
            time.sleep(0.1)
        raise RuntimeError("the gateway did not answer within 30 s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def pushed_gateway(home: Path, directory: Path) -> tuple[Gateway, Path, str]:
    """A gateway on a new SQLite ledger in `directory` holding `home`'s sessions, pushed by
    machine "laptop": the running gateway, the push token's file and a read token."""
    store = str(directory / "gateway.db")
    pusher = make_token(store, directory, "laptop", "push")
    reader = make_token(store, directory, "viewer", "read").read_text().strip()
    gateway = Gateway(store, directory / "gateway.log").start()
    done = push(home, gateway.url, pusher, "laptop")
    if done.wait(timeout=60) != 0:
        gateway.stop()
        raise AssertionError(done.stderr.read() if done.stderr else "the push failed")
    return gateway, pusher, reader


def push(home: Path, url: str, token_file: Path, machine: str, *extra: str,
         batch_sessions: int = 500, mode: str = "backfill") -> subprocess.Popen[bytes]:  # fmt: skip
    """`tracehouse sync backfill` (or `live`) of `home` to the gateway, as machine `machine`."""
    env = dict(os.environ, TRACEHOUSE_MACHINE=machine, TRACEHOUSE_PROGRESS="false")
    env["TRACEHOUSE_BATCH_SESSIONS"] = str(batch_sessions)
    command = [sys.executable, "-m", "tracehouse.cli.app", "sync", mode, "--home", str(home),
               "--store", url, "--token-file", str(token_file), "-q", *extra]  # fmt: skip
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@contextmanager
def gateway_in_thread(address: str) -> Iterator[str]:
    """The gateway app on `address`'s ledger, served by uvicorn in a thread of this process
    (a process of its own costs seconds to start, too many for a property's examples);
    yields a push URL with a fresh token for machine `laptop` in it."""
    import uvicorn

    from tracehouse.gateway.app import GatewayConfig, create_app

    token = ledger_with_tokens(address, {"push": ("laptop", "push")})["push"]
    # the socket bound here and handed over: no other process can take the port between
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    port = int(listening.getsockname()[1])
    config = uvicorn.Config(create_app(GatewayConfig(address)), log_level="warning",
                            lifespan="on")  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the gateway did not start within 30 s")
        time.sleep(0.02)
    try:
        yield address_with(f"http://127.0.0.1:{port}", token, "laptop")
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listening.close()
