"""What each worker of :mod:`odyssey.tune.engine`'s local cluster runs as it starts: Dask
imports this module first of the workers' ``preload`` modules and calls :func:`dask_setup`
before the worker registers with the scheduler (loaded only in the workers).
A preload, not worker plugins: no round trip to the scheduler and the workers, and no
moment when a worker takes tasks without its settings."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
from typing import Any


def dask_setup(worker: Any) -> None:
    """Set the worker's process up:

    * it ignores SIGINT. A Ctrl-C on the terminal reaches every process of its group: the
      `odyssey` process cancels the tasks and closes the cluster; its workers must not die
      of the signal first (nor print tracebacks about it);
    * it ends with ``os._exit`` once the worker has closed, skipping the interpreter's
      teardown: freeing every object a worker made (the models and search results of
      hundreds of tasks) took 1.3 s of the 34 s VGG16 network run on 2 workers, all of it
      after the last result (the cluster's ``close`` waits for its processes). The worker
      has sent its results and closed its connections by then; nothing else of it is kept
      (its scratch directory belongs to its nanny, in the `odyssey` process). The exit
      handlers registered before this one (distributed's, logging's flush) have nothing
      left to do in a closed worker;
    * its garbage collector and allocator are set as the `odyssey` command's
      (:func:`odyssey.runtime.tune_gc`, :func:`odyssey.runtime.tune_malloc`);
    * it does not log a heartbeat that finds the scheduler gone: after a Ctrl-C the `odyssey`
      process closes the cluster, and a worker whose heartbeat was under way (a loaded
      machine makes it likely) would print that error with its traceback under the
      command's summary.
    """
    import logging

    from odyssey.runtime import tune_gc, tune_malloc

    logging.getLogger("distributed.worker").addFilter(_heartbeat_after_close)

    with contextlib.suppress(ValueError):  # not the main thread: nothing to do
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    atexit.register(os._exit, 0)
    tune_gc()
    tune_malloc()


def _heartbeat_after_close(record: Any) -> bool:
    """False for distributed's "Failed to communicate with scheduler during heartbeat"."""
    return "during heartbeat" not in str(record.getMessage())
