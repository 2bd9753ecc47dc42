"""The worker plugin of :mod:`odyssey.tune.engine`'s local cluster (imports Dask: loaded only
when a cluster runs)."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
from typing import Any

from distributed import WorkerPlugin


class IgnoreInterrupt(WorkerPlugin):
    """The local cluster's worker processes ignore SIGINT. A Ctrl-C on the terminal reaches
    every process of its group: the `odyssey` process cancels the tasks and closes the
    cluster; its workers must not die of the signal first (nor print tracebacks about it)."""

    idempotent = True

    def setup(self, worker: Any) -> None:
        with contextlib.suppress(ValueError):  # not the main thread: nothing to do
            signal.signal(signal.SIGINT, signal.SIG_IGN)


class ExitWithoutTeardown(WorkerPlugin):
    """A local worker process ends with ``os._exit`` once the worker has closed, skipping the
    interpreter's teardown: freeing every object a worker made (the models and search
    results of hundreds of tasks) took 1.3 s of the 34 s VGG16 network run on 2 workers, all
    of it after the last result (the cluster's ``close`` waits for its processes). The
    worker has sent its results and closed its connections by then; nothing else of it is
    kept (its scratch directory belongs to its nanny, in the `odyssey` process)."""

    idempotent = True

    def setup(self, worker: Any) -> None:
        # run at the interpreter's exit, before the teardown; the handlers registered before
        # this one (distributed's, logging's flush) have nothing left to do in a closed worker
        atexit.register(os._exit, 0)


class CollectorSettings(WorkerPlugin):
    """A local worker process sets the garbage collector as the `odyssey` command does
    (:func:`odyssey.runtime.tune_gc`)."""

    idempotent = True

    def setup(self, worker: Any) -> None:
        from odyssey.runtime import tune_gc

        tune_gc()
