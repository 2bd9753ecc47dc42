"""The worker plugin of :mod:`odyssey.tune.engine`'s local cluster (imports Dask: loaded only
when a cluster runs)."""

from __future__ import annotations

import contextlib
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
