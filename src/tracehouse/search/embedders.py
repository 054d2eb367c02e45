"""The models that turn text into vectors for search by meaning, named by one setting.

    wordllama                 WordLlama's 256-dimension static model, shipped in its wheel: no
                              download, ever (the default)
    model2vec:FOLDER          a Model2Vec static model saved in a folder
    model2vec:OWNER/NAME      a Model2Vec model from the Hugging Face hub: read from the hub's
                              cache; fetched only by `index embeddings --allow-download`
    openai:MODEL@URL          any OpenAI-compatible `/embeddings` endpoint (Ollama, LM Studio, a
                              team's server); the bearer key, if it wants one, from the
                              TRACEHOUSE_EMBEDDINGS_KEY environment variable
    none                      no vectors: search is lexical only

Every vector is unit length, so a dot product is the cosine. A ledger records the model that
made its vectors (`Embedder.name`); queries are embedded by the model the settings name, never
by one the ledger names (a ledger's text must not choose a URL or a folder, DESIGN §9).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from tracehouse.config import WORDLLAMA, ModelSpec, parse_model
from tracehouse.errors import TracehouseError

if TYPE_CHECKING:
    import numpy as np

DEFAULT = "wordllama"
KEY_VARIABLE = "TRACEHOUSE_EMBEDDINGS_KEY"
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
# Texts handed to a model at once: large enough that the tokenizer's own threads are busy,
# small enough that an endpoint's request stays a few hundred KB.
BATCH = 256


class EmbeddingError(TracehouseError):
    """A model that cannot be loaded or answered badly."""


class Embedder(Protocol):
    name: str  # what the ledger records with every vector

    @property
    def dims(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text."""
        ...


def beside(embedder: Embedder, texts: Sequence[str]) -> Callable[[], np.ndarray]:
    """Embed `texts` in a thread while the caller writes what does not wait for the vectors;
    the tokenizer and NumPy let go of the GIL, so on two cores this hides most of the model's
    time (the rows' own inserts take as long). Returns the call that waits for them."""
    from concurrent.futures import ThreadPoolExecutor

    if not texts:
        return lambda: embedder.embed(texts)
    pool = ThreadPoolExecutor(1, thread_name_prefix="embed")
    found = pool.submit(embedder.embed, texts)
    pool.shutdown(wait=False)
    return found.result


class Lazy:
    """The settings' model, loaded when a text first needs its vector: a sync with nothing new,
    one whose rewritten rows hold only texts embedded before (a session's row, written again at
    every append), and a lexical search never load it (WordLlama's import and load take 0.3-0.6
    s). It is an `Embedder` itself, the packaged model's dimensions known without loading it."""

    def __init__(self, setting: str, *, allow_download: bool = False) -> None:
        self.spec = parse_model(setting)
        self.name = self.spec.name
        self._allow_download = allow_download
        self._model: Embedder | None = None
        self._loading = threading.Lock()  # a gateway's requests may ask at once
        self._early: threading.Thread | None = None

    @property
    def enabled(self) -> bool:
        return self.spec.kind != "none"

    @property
    def dims(self) -> int:
        if self._model is None and self.spec.kind == "wordllama":
            return _WordLlama.dims
        return self.model().dims

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.model().embed(texts)

    def load_in_background(self) -> None:
        """Start loading on a thread of its own, for a run about to parse what it will embed:
        the load then overlaps the parse and the wait for the secret-scanning rules (native,
        without the GIL) instead of following them. A process must not fork while it runs.
        The thread is not a daemon: one still in the tokenizer's native code when the process
        exits is torn down by the interpreter's exit and aborts the process ("FATAL: exception
        not rethrown"), so the exit waits for the load instead (0.3-0.6 s at most)."""
        if self.enabled and self._model is None and self._early is None:
            self._early = threading.Thread(target=self._load_quietly, name="embeddings")
            self._early.start()

    def _load_quietly(self) -> None:
        # Whatever stops the load is said when a text needs the model, by whoever asks then
        # (it loads again), never as a thread's traceback.
        with contextlib.suppress(Exception):
            self.model()

    def model(self) -> Embedder:
        with self._loading:
            if self._model is None:
                self._model = load(self.spec, allow_download=self._allow_download)
            return self._model


def load(spec: ModelSpec, *, allow_download: bool = False) -> Embedder:
    """The model `spec` names, ready to embed. Nothing is fetched unless `allow_download`."""
    if spec.kind == "wordllama":
        return _WordLlama()
    if spec.kind == "model2vec":
        return _Model2Vec(spec, allow_download)
    if spec.kind == "openai":
        return _Endpoint(spec)
    raise EmbeddingError('search by meaning is off (embeddings = "none")')


def _normalized(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out: np.ndarray = vectors / np.maximum(norms, 1e-12)
    return out


def _by_length(texts: Sequence[str], embed_batch: Any, dims: int) -> np.ndarray:
    """`embed_batch` over `texts` in batches of similar lengths: a static model pads a batch to
    its longest text, and sorting took WordLlama from 2.5 s to 0.9 s on the fixture corpus."""
    import numpy as np

    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.empty((len(texts), dims), dtype=np.float32)
    for start in range(0, len(order), BATCH):
        picked = order[start : start + BATCH]
        out[picked] = embed_batch([texts[i] for i in picked])
    return _normalized(out)


class _WordLlama:
    """WordLlama's packaged model: its tokenizer and its table of token vectors, read from the
    files its wheel ships. Read directly they load in 0.2 s; through `WordLlama.load` in 0.6 s
    (the package's own imports), a cost every search by meaning would pay at start. And
    WordLlama 0.4 looks for the tokenizer under `tokenizer/` while the wheel ships
    `tokenizers/`, then tries to download it."""

    dims = 256
    name = WORDLLAMA

    def __init__(self) -> None:
        import importlib.util

        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        spec = importlib.util.find_spec("wordllama")
        folder = Path(spec.origin).parent if spec and spec.origin else Path()
        tokenizer = folder / "tokenizers" / "l2_supercat_tokenizer_config.json"
        weights = folder / "weights" / f"l2_supercat_{self.dims}.safetensors"
        try:
            self._tokenizer = Tokenizer.from_file(str(tokenizer))
            table = load_file(str(weights))["embedding.weight"]
        except Exception as error:  # tokenizers raises plain Exception, safetensors its own
            raise EmbeddingError(f"wordllama: cannot read its packaged model: {error}") from None
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        # The same ids without each token's offsets in the text, which nothing here reads:
        # embedding 20,000 of the bench's messages took a fifth less CPU and 11 MB less at its peak.
        self._encode = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)
        # The model's rows and one of zeros, which pads a batch's shorter texts.
        zeros = np.zeros((1, self.dims), dtype=np.float32)
        self._table = np.vstack([table.astype(np.float32), zeros])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return _by_length(texts, self._pooled, self.dims)

    def _pooled(self, part: list[str]) -> np.ndarray:
        """The sum of each text's token rows (`_by_length` normalises it: the same direction as
        WordLlama's mean), added one token position at a time over the batch: WordLlama's own
        masked products were 2.1 s of the 3.3 s that embedding the fixture corpus took, and one
        gather of every token row at once 0.8 s; this takes 0.1 s."""
        import numpy as np

        ids = [e.ids for e in self._encode(part, add_special_tokens=False)]
        width = max(map(len, ids), default=0)
        padded = np.full((len(ids), width), len(self._table) - 1, dtype=np.int64)
        for row, found in zip(padded, ids, strict=True):
            row[: len(found)] = found
        out = np.zeros((len(ids), self.dims), dtype=np.float32)
        for column in padded.T:
            out += self._table[column]
        return out


class _Model2Vec:
    def __init__(self, spec: ModelSpec, allow_download: bool) -> None:
        from model2vec import StaticModel

        folder = Path(spec.target).expanduser()
        if not folder.is_dir():
            if not _HUB_ID.fullmatch(spec.target):
                raise EmbeddingError(f"model2vec: {spec.target}: no such folder, nor a hub id")
            folder = _hub_folder(spec.target, allow_download)
        try:
            self._model = StaticModel.from_pretrained(folder, force_download=False)
        except Exception as error:  # a folder that is not a model: its reader's own errors
            raise EmbeddingError(f"model2vec: cannot load {spec.target}: {error}") from None
        self.dims = int(self._model.dim)
        self.name = spec.name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        def batch(part: list[str]) -> Any:
            return self._model.encode(part, use_multiprocessing=False, normalize=False)

        return _by_length(texts, batch, self.dims)


def _hub_folder(repo: str, allow_download: bool) -> Path:
    """The hub model's folder in the hub's cache on this machine; fetched into it only with
    the user's consent (`allow_download`)."""
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo, local_files_only=not allow_download))
    except Exception as error:  # the hub client's errors have no common base
        if allow_download:
            raise EmbeddingError(f"model2vec: cannot fetch {repo}: {error}") from None
        raise EmbeddingError(
            f"model2vec: {repo} is not in the hub's cache on this machine;"
            " `tracehouse index embeddings --allow-download` fetches it"
        ) from None


class _Endpoint:
    """An OpenAI-compatible `POST {url}/embeddings`."""

    TIMEOUT = 60.0

    def __init__(self, spec: ModelSpec) -> None:
        self._spec = spec
        self.name = spec.name
        self.dims = len(self._request(["dimensions"])[0])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        rows: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            rows.extend(self._request(list(texts[start : start + BATCH])))
        return _normalized(np.asarray(rows, dtype=np.float32).reshape(len(texts), -1))

    def _request(self, texts: list[str]) -> list[list[float]]:
        import urllib.error
        import urllib.request

        body = orjson.dumps({"model": self._spec.target, "input": texts})
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(KEY_VARIABLE)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = f"{self._spec.url}/embeddings"
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.TIMEOUT) as response:
                answer = orjson.loads(response.read())
        except (urllib.error.URLError, OSError, orjson.JSONDecodeError) as error:
            raise EmbeddingError(f"{url}: {error}") from None
        return _vectors_of(answer, len(texts), url)


def _vectors_of(answer: Any, count: int, url: str) -> list[list[float]]:
    """The vectors of an `/embeddings` answer, in the order of its `index` fields."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or len(data) != count:
        raise EmbeddingError(f"{url}: expected {count} embeddings in `data`")
    rows: list[list[float]] = [[] for _ in range(count)]
    for n, item in enumerate(data):
        at = item.get("index", n) if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(at, int) or not 0 <= at < count or not isinstance(vector, list):
            raise EmbeddingError(f"{url}: data[{n}] is not an embedding")
        rows[at] = vector
    if len({len(r) for r in rows}) != 1 or not rows[0]:
        raise EmbeddingError(f"{url}: embeddings of different lengths")
    return rows
