"""The models a user can choose: WordLlama from its wheel, a Model2Vec folder (made here, never
downloaded), any OpenAI-compatible endpoint (a scripted one on 127.0.0.1); and the setting that
names them, validated where it enters."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import numpy as np
import orjson
import pytest

from tracehouse.config import ModelSpec, parse_model
from tracehouse.search import embedders
from tracehouse.search.embedders import EmbeddingError


@pytest.mark.parametrize(
    ("setting", "name"),
    [
        ("wordllama", "wordllama:l2_supercat_256"),
        ("model2vec:minishlab/potion-base-8M", "model2vec:minishlab/potion-base-8M"),
        ("openai:nomic-embed-text@http://127.0.0.1:11434/v1/", "openai:nomic-embed-text@http://127.0.0.1:11434/v1"),
        ("none", "none"),
    ],
)  # fmt: skip
def test_settings_name_their_model(setting: str, name: str) -> None:
    assert parse_model(setting).name == name
    assert parse_model(name).name == name  # what a ledger records reads back the same


@pytest.mark.parametrize("bad", ["", "bert", "openai:x", "openai:x@ftp://h", "model2vec:"])
def test_a_bad_setting_says_what_is_expected(bad: str) -> None:
    with pytest.raises(ValueError, match="expected wordllama"):
        parse_model(bad)


def test_wordllama_loads_from_its_wheel_and_ranks_by_meaning() -> None:
    model = embedders.load(ModelSpec("wordllama"))
    got = model.embed(
        ["dividing by zero crashed", "ZeroDivisionError in the ratio", "bread recipe", ""]
    )
    assert got.shape == (4, 256) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got[:3], axis=1), 1, atol=1e-5)
    assert got[0] @ got[1] > got[0] @ got[2]
    assert not got[3].any()  # no words: no direction


def test_wordllama_sums_as_wordllama_means(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our pooling is the library's, without its padded batches: the same directions."""
    wordllama = pytest.importorskip("wordllama")
    folder = Path(wordllama.__file__).parent
    theirs = wordllama.WordLlama.load(cache_dir=folder, disable_download=True)
    texts = ["a short one", "a much longer text " * 40, "ümlaut und ß", "x"]
    ours = embedders.load(ModelSpec("wordllama")).embed(texts)
    assert np.allclose(ours, theirs.embed(texts, norm=True), atol=1e-4)


def _tiny_model2vec(folder: Path) -> None:
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {"[UNK]": 0, "[PAD]": 1, "zero": 2, "division": 3, "bread": 4, "crash": 5}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    table = np.random.default_rng(0).standard_normal((len(vocab), 8)).astype(np.float32)
    StaticModel(vectors=table, tokenizer=tokenizer, normalize=True).save_pretrained(folder)


def test_a_model2vec_folder(tmp_path: Path) -> None:
    _tiny_model2vec(tmp_path / "m2v")
    model = embedders.load(parse_model(f"model2vec:{tmp_path / 'm2v'}"))
    got = model.embed(["zero division", "division zero", "bread"])
    assert got.shape == (3, 8) and model.dims == 8
    assert got[0] @ got[1] == pytest.approx(1, abs=1e-5)
    assert model.name == f"model2vec:{tmp_path / 'm2v'}"


def test_a_hub_model_not_fetched_says_how_to_fetch_it(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = []

    def snapshot_download(repo: str, *, local_files_only: bool) -> str:
        asked.append((repo, local_files_only))
        raise FileNotFoundError("not in the cache")

    monkeypatch.setattr("huggingface_hub.snapshot_download", snapshot_download)
    with pytest.raises(EmbeddingError, match=r"not in the hub's cache.*--allow-download"):
        embedders.load(parse_model("model2vec:nobody/not-a-model"))
    assert asked == [("nobody/not-a-model", True)]  # the cache only: nothing is fetched


class _Endpoint(http.server.BaseHTTPRequestHandler):
    asked: ClassVar[list[dict[str, object]]] = []
    answer: ClassVar[object] = None  # None: well-formed vectors

    def do_POST(self) -> None:
        body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).asked.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), **body}
        )
        data = type(self).answer
        if data is None:
            texts = body["input"]
            data = {"data": [{"index": i, "embedding": [len(t) + 1.0, 1.0, float(i)]}
                             for i, t in reversed(list(enumerate(texts)))]}  # fmt: skip
        out = orjson.dumps(data)
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    _Endpoint.asked, _Endpoint.answer = [], None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_an_openai_compatible_endpoint(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embedders.KEY_VARIABLE, "sk-test")
    model = embedders.load(parse_model(f"openai:tiny@{endpoint}"))
    got = model.embed(["ab", "abcd"])
    assert model.dims == 3 and got.shape == (2, 3)
    assert np.allclose(np.linalg.norm(got, axis=1), 1)
    assert got[0][2] == 0 and got[1][2] > 0  # answered out of order, placed by `index`
    assert {a["path"] for a in _Endpoint.asked} == {"/v1/embeddings"}
    assert {a["auth"] for a in _Endpoint.asked} == {"Bearer sk-test"}
    assert _Endpoint.asked[-1]["model"] == "tiny"


def test_an_endpoint_that_answers_badly_is_named(endpoint: str) -> None:
    _Endpoint.answer = {"data": [{"index": 0, "embedding": "no"}]}
    with pytest.raises(EmbeddingError, match=r"/v1/embeddings: data\[0\] is not an embedding"):
        embedders.load(parse_model(f"openai:tiny@{endpoint}"))


def test_an_endpoint_that_does_not_answer_is_named() -> None:
    with pytest.raises(EmbeddingError, match=r"127\.0\.0\.1:9/embeddings"):
        embedders.load(parse_model("openai:tiny@http://127.0.0.1:9"))


def _join_early_loads() -> None:
    for thread in threading.enumerate():
        if thread.name == "embeddings":
            thread.join()


def test_a_model_loaded_early_is_loaded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[ModelSpec] = []
    monkeypatch.setattr(embedders, "load", lambda spec, **_: made.append(spec) or object())
    lazy = embedders.Lazy("wordllama")
    assert lazy.dims == 256 and not made  # the packaged model's, without loading it
    lazy.load_in_background()
    _join_early_loads()
    assert lazy.model() is lazy.model()
    assert made == [parse_model("wordllama")]


def test_a_model_that_fails_early_is_said_by_whoever_needs_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(spec: ModelSpec, **_: object) -> None:
        raise EmbeddingError("the model's folder is gone")

    monkeypatch.setattr(embedders, "load", refuse)
    lazy = embedders.Lazy("model2vec:/nowhere")
    lazy.load_in_background()
    _join_early_loads()
    assert capsys.readouterr().err == ""  # no thread's traceback
    with pytest.raises(EmbeddingError, match="folder is gone"):
        lazy.embed(["a text"])


def test_a_process_that_exits_while_the_model_loads_exits_cleanly() -> None:
    """The interpreter's exit tears down a daemon thread still in the tokenizer's native code,
    which aborts the process: a `push` that parsed in 0.6 s died so. Exits at several points
    of the load, side by side."""
    import subprocess
    import sys

    script = ("import sys, time; from tracehouse.search.embedders import Lazy; "
              "Lazy('wordllama').load_in_background(); time.sleep(float(sys.argv[1]))")  # fmt: skip
    exiting = [
        subprocess.Popen([sys.executable, "-c", script, str(after)], stderr=subprocess.PIPE)
        for after in (0, 0.2, 0.4, 0.6, 0.8)
    ]
    for process in exiting:
        _, err = process.communicate(timeout=60)
        assert (process.returncode, err.decode()) == (0, ""), process.args


def test_a_sync_that_pushes_leaves_embedding_to_the_gateway() -> None:
    from tracehouse.config import Settings
    from tracehouse.pipeline.sources import embeddings_for

    assert embeddings_for(Settings()) is not None
    assert embeddings_for(Settings().with_flags(store="https://gateway.example:8443")) is None
