"""Process-wide settings for odyssey's long runs (the command line and its Dask workers).

:func:`tune_gc` sets the thresholds of Python's cyclic garbage collector. A search builds
hundreds of thousands of short-lived expression nodes and arrays per design, and keeps its
models (each a DAG of tens of thousands of immutable nodes) alive. With CPython's defaults
(700, 10, 10) the collector ran a full collection, which scans every live object, 54
times in the VGG16 network run (`odyssey network vgg16 --design all --samples 5000`, 315
tasks in one process): 10.2 of its 64 CPU s (16%). With :data:`GC_THRESHOLDS` it ran none
and the run took 57 CPU s (2026-11-25, `scripts/bench_network.py`). Garbage in reference
cycles (about 7,000 objects per model no longer used) is still collected, later: the
first two generations run every 10,000 and 100,000 allocations, the full collection after
100 of the second (or when Python's own rule, a quarter of the old objects new since the
last one, holds).

:func:`tune_malloc` keeps glibc's allocator from mapping and unmapping every large numpy
temporary. Above its mmap threshold (128 KiB at first, raised only as far as 32 MiB by what is
freed) each array of a batch of boxes or tilings was a fresh ``mmap``, its pages faulted in and
zeroed by the kernel, then ``munmap``-ed: 2.6 of the 11.3 CPU s of `odyssey optimum` on MM
1024^3 `ij-ik.j` were system time. With the threshold and the trim threshold raised (and a
pad on each heap growth) freed memory is reused: 0.3 s of system time and the search 10.8 ->
8.8 s (2026-11-27, the machine's other core busy), the peak resident memory about the same.

Only the `odyssey` command and its local Dask workers call them: a program that imports
odyssey as a library keeps its own collector and allocator settings.

:func:`deferred_interrupt` turns Ctrl-C into a flag for a while (the studies keep every
design they finished: :func:`odyssey.studies._common.iter_optima`).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import signal
import threading
from collections.abc import Iterator

#: (generation 0, 1, 2) thresholds set by :func:`tune_gc`; CPython's default is (700, 10, 10)
GC_THRESHOLDS = (10_000, 10, 100)


def tune_gc() -> None:
    """Set the collector's thresholds to :data:`GC_THRESHOLDS` (idempotent)."""
    gc.set_threshold(*GC_THRESHOLDS)


#: glibc ``mallopt`` parameters (malloc.h) and the values :func:`tune_malloc` sets: arrays up
#: to 512 MiB come from the heap, which keeps up to 1 GiB free before returning it and grows
#: by 64 MiB at a time
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
MALLOC_SETTINGS = ((_M_MMAP_THRESHOLD, 512 << 20), (_M_TRIM_THRESHOLD, 1 << 30), (_M_TOP_PAD, 64 << 20))


def tune_malloc() -> bool:
    """Apply :data:`MALLOC_SETTINGS` where the C library is glibc (idempotent); False elsewhere
    (another C library, or none found), where nothing changes."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return all(mallopt(param, value) == 1 for param, value in MALLOC_SETTINGS)


@contextlib.contextmanager
def deferred_interrupt(flag: threading.Event) -> Iterator[threading.Event]:
    """While inside, Ctrl-C (SIGINT) sets ``flag`` instead of raising KeyboardInterrupt, so
    the code inside finishes what it does (a study tabulating a design whose optimum is
    found) and the caller stops at its next check of ``flag``. Only in the main thread and
    where SIGINT has Python's default handler; elsewhere nothing changes."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield flag
        return
    signal.signal(signal.SIGINT, lambda signum, frame: flag.set())
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
