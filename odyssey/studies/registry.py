"""Every architecture study by name (``odyssey study --list``).

Each study lives in its own module as ``STUDY``; this module only collects them, so the
framework (:mod:`odyssey.studies.study`) stays below the studies in the import graph.
"""

from __future__ import annotations

from odyssey.errors import StudyError
from odyssey.studies import (
    cnn_conv12,
    cnn_dataflows,
    comm_pruning,
    divisor_only,
    max_model,
    mm_dataflows,
    mp_objectives,
    shared_array_study,
    tuners_study,
)
from odyssey.studies.study import Study

STUDIES: dict[str, Study] = {s.name: s for s in (
    mm_dataflows.STUDY, divisor_only.STUDY, max_model.STUDY, comm_pruning.STUDY,
    mp_objectives.STUDY, cnn_conv12.STUDY,
    cnn_dataflows.STUDY, shared_array_study.STUDY, tuners_study.STUDY,
)}


def get_study(name: str) -> Study:
    """The study ``name``, or StudyError listing the known ones."""
    if name not in STUDIES:
        raise StudyError(f"unknown study `{name}`; the studies are {', '.join(STUDIES)} "
                         "(`odyssey study --list` describes them)")
    return STUDIES[name]
