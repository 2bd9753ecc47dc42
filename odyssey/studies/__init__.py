"""odyssey.studies: the Odyssey paper's architecture studies as declarative experiments.

* :mod:`.study`: the framework (a study is a function of a :class:`StudyContext` returning
  tables and plots), :mod:`.writer` writes a study's folder atomically;
* one module per study (``mm_dataflows``, ``divisor_only``, ...), collected by
  :mod:`.registry` (``odyssey study --list``);
* :mod:`.tuner_bench`: the tuner benchmark behind ``odyssey study tuners``.

Network-scale tuning (layer tables, per-layer tuning, transfer) lives in :mod:`odyssey.network`.
"""
