"""Vectors as both stores keep them, and the nearest of them to a query, with NumPy.

A vector is kept as 8-bit integers (each unit-length component × 127): a quarter of float32's
size, and its cosine within about 0.01 of the exact one. Vectors are stored in blocks of up to
BLOCK rows (their text keys and their components, one BLOB each), so a search reads a few dozen
large values rather than a row per vector. The search is exact over the quantised vectors: every
block is scored, in one matrix product each (240,000 vectors of 256 dimensions: 22 ms on one
core), with no approximate index to tune or to fall out of date.

Why not sqlite-vec: its extension must be loaded into SQLite, and Python builds without
`enable_load_extension` are common (pyenv's default build, this project's CI, macOS's system
Python): there it cannot run at all. The same blocks serve PostgreSQL where pgvector is absent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

BLOCK = 4096
SCALE = 127.0


def quantised(vectors: np.ndarray) -> np.ndarray:
    """Unit-length float rows as int8 rows."""
    return np.clip(np.rint(vectors * SCALE), -SCALE, SCALE).astype(np.int8)


@dataclass(frozen=True)
class Block:
    keys: bytes  # int64 text keys, native order
    vectors: bytes  # int8 rows, `dims` each

    @staticmethod
    def of(keys: np.ndarray, vectors: np.ndarray) -> Block:
        return Block(keys.astype(np.int64).tobytes(), quantised(vectors).tobytes())

    def joined(self, other: Block) -> Block:
        return Block(self.keys + other.keys, self.vectors + other.vectors)

    @property
    def count(self) -> int:
        return len(self.keys) // 8

    def key_list(self) -> list[int]:
        return [int(k) for k in np.frombuffer(self.keys, dtype=np.int64)]

    def kept(self, live: set[int]) -> Block:
        """The block without the vectors of keys not in `live`."""
        keys = np.frombuffer(self.keys, dtype=np.int64)
        keep = np.fromiter((int(k) in live for k in keys), dtype=bool, count=len(keys))
        dims = len(self.vectors) // max(len(keys), 1)
        rows = np.frombuffer(self.vectors, dtype=np.int8).reshape(len(keys), dims)
        return Block(keys[keep].tobytes(), rows[keep].tobytes())


def nearest(
    query: np.ndarray, blocks: Iterable[tuple[bytes, bytes]], dims: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every stored text key and its cosine with `query` (a unit float vector), best first."""
    all_keys: list[np.ndarray] = []
    all_scores: list[np.ndarray] = []
    q = np.asarray(query, dtype=np.float32) / SCALE
    for keys, vectors in blocks:
        matrix = np.frombuffer(vectors, dtype=np.int8).reshape(-1, dims)
        all_keys.append(np.frombuffer(keys, dtype=np.int64))
        all_scores.append(matrix.astype(np.float32) @ q)
    if not all_keys:
        return np.empty(0, np.int64), np.empty(0, np.float32)
    keys_out = np.concatenate(all_keys)
    scores = np.concatenate(all_scores)
    order = np.argsort(-scores, kind="stable")
    return keys_out[order], scores[order]


def placed(last: Block | None, new: Block, dims: int) -> tuple[Block | None, list[Block]]:
    """`new` added to the last block while it has room: the last block as it becomes (None
    when it is full or there is none), and the new blocks of up to BLOCK vectors after it.
    Few large blocks keep a search's reads few however many small syncs added vectors."""
    merged = None
    if last is not None and last.count < BLOCK:
        room = BLOCK - last.count
        merged = last.joined(Block(new.keys[: room * 8], new.vectors[: room * dims]))
        new = Block(new.keys[room * 8 :], new.vectors[room * dims :])
    fresh = [
        Block(new.keys[i * 8 : (i + BLOCK) * 8], new.vectors[i * dims : (i + BLOCK) * dims])
        for i in range(0, new.count, BLOCK)
    ]
    return merged, fresh


def prune_blocks(
    rows: Iterable[tuple[int, bytes, bytes]],
    live: set[int],
    execute: Callable[[str, tuple[object, ...]], object],
) -> int:
    """Rewrite each block of `rows` (number, keys, vectors) without the vectors of the keys not
    in `live`, through `execute` (SQL with `?` placeholders, as both stores take it); a block
    left empty goes. Returns the vectors dropped."""
    dropped = 0
    for number, keys, vectors in rows:
        block = Block(bytes(keys), bytes(vectors))
        kept = block.kept(live)
        if kept.count == block.count:
            continue
        dropped += block.count - kept.count
        if kept.count:
            execute(
                "UPDATE embedding_blocks SET keys = ?, vectors = ? WHERE block = ?",
                (kept.keys, kept.vectors, number),
            )
        else:
            execute("DELETE FROM embedding_blocks WHERE block = ?", (number,))
    return dropped
