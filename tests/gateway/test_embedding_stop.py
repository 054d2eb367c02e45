"""The gateway's embedding thread at shutdown: the interpreter's exit tears a daemon thread down
wherever it is, and one in the tokenizer's native code aborts the process ("FATAL: exception
not rethrown"). So the thread is not a daemon, and the app's shutdown ends it after its step."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tests.gateway.appends import DATA
from tests.search.fake_model import WordsModel
from tracehouse.gateway.embedding import Embedding
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store import open_store


class SlowModel(WordsModel):
    """Holds each call until the test lets it go, saying when one began."""

    enabled = True

    def __init__(self) -> None:
        super().__init__()
        self.began = threading.Event()
        self.go = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.began.set()
        self.go.wait(10)
        return super().embed(texts)


def _ledger(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    path = tmp_path / "ledger.db"
    store = open_store(path)
    try:
        assert sync(store, SyncOptions(sources={"claude-code": [home / ".claude"]}, workers=0)).ok
    finally:
        store.close()
    return path


def _embedding_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "embedding"]


def _backlog(path: Path) -> int:
    store = open_store(path)
    try:
        return store.embedding_backlog()
    finally:
        store.close()


def test_a_stopping_gateway_ends_its_embedding_after_the_step_it_is_in(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    waiting = _backlog(ledger)
    embedding = Embedding(str(ledger), "wordllama")
    model = embedding.model = SlowModel()  # type: ignore[assignment]
    embedding.after_write()
    assert model.began.wait(10)
    assert all(not t.daemon for t in _embedding_threads())  # the exit waits for it
    threading.Timer(0.2, model.go.set).start()  # the step in progress finishes
    assert embedding.stop(timeout=10)
    assert not _embedding_threads()
    # the step's vectors were committed, and the next table's step never began
    assert 0 < _backlog(ledger) < waiting
    embedding.after_write()  # a write as the app shuts down starts nothing
    assert not _embedding_threads()


def test_an_app_started_again_embeds_again(tmp_path: Path) -> None:
    embedding = Embedding(str(_ledger(tmp_path)), "wordllama")
    model = embedding.model = SlowModel()  # type: ignore[assignment]
    model.go.set()
    assert embedding.stop(timeout=10)  # a test client's app, ended
    embedding.start()  # and started again
    embedding.after_write()
    assert embedding.wait(timeout=10) and model.calls > 0
