"""Pipeline: discover → plan → parse → batch → sink; one sync path for backfill and live."""

import gc
import os


def collect_less() -> None:
    """Run the cycle collector's first generation every 10,000 allocations, not every 700, in a
    process that parses or writes: a sync allocates millions of short-lived dicts and lists that
    no cycle holds (the source suite's no-cycle test and test_retries.py keep it so), so
    each early pass only walks live objects. Parsing the bench corpus spent 2.7% of its time there,
    0.4% after; its peak memory is the same."""
    gc.set_threshold(10_000, 10, 10)


def one_blas_thread() -> None:
    """Have numpy's OpenBLAS load without its thread pool, unless the user set its size. It
    starts a thread per core as it loads, and a process running another thread spawns its
    parsers instead of forking them (`processes.start_method`): sqlite-utils imports numpy
    where it is installed, so every first backfill (a new ledger's migrations) spawned, each
    parser importing the readers and loading the secret rules again (20 MB more at the peak of
    the bench's 384 MB first load). A passage's vector is no faster with more threads: the
    same embed time with one (1.39-1.60 s against 1.40-1.48 over three runs)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
