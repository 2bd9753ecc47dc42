"""The glue to OpenTuner's library, imported only when an ``opentuner`` tuner is made.

:class:`OpenTunerRun` is one tuning run of OpenTuner driven from outside, through its
``opentuner.api.TuningRunManager`` (``get_next_desired_result`` / ``report_result``).
OpenTuner is a command-line program first; using it as a library has side effects on
the process, and this module confines them:

* importing ``opentuner.tuningrunmain`` replaces ``logging.Formatter`` by its own
  subclass; the original is put back right after the import;
* ``TuningRunMain.__init__`` configures the root logger (a console handler at INFO and a
  file handler that creates ``./opentuner.log``). :class:`_Manager` does the rest of that
  set-up without it;
* its results database defaults to ``./opentuner.db/<host>.db``; here it is an
  in-memory SQLite database, gone with the run: nothing is written to the disk;
* under SQLAlchemy 2 it warns at import (``declarative_base`` moved), on every request
  (``SAWarning``: an object not in the session) and on duplicate requests (legacy
  ``Query.get``), and it leaks a file handle on ``/proc/cpuinfo`` (``ResourceWarning``).
  :func:`quiet` silences these, around the calls into OpenTuner only;
* its display plugin (``--quiet``) and duplicate-request warnings (``--no-dups``) are off.

Reproducibility: OpenTuner's differential evolution draws its three parents by shuffling
``list(set(population) - {parent})``, a set of objects hashed by their address, so the
same seed gives other parents from run to run. :data:`DEFAULT` is OpenTuner's default
root technique (``AUCBanditMetaTechniqueA``: an AUC bandit over
``DifferentialEvolutionAlt``, ``UniformGreedyMutation``, ``NormalGreedyMutation(0.3)``
and ``RandomNelderMead``) rebuilt from OpenTuner's classes, except that its DE members
are hashed by their index in the population (:class:`_OrderedDE`): the same search, in
a fixed order. It is registered with OpenTuner under its own name.
"""

from __future__ import annotations

import copy
import logging
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

_FORMATTER = logging.Formatter
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import opentuner  # noqa: E402
    from opentuner.api import TuningRunManager  # noqa: E402
    from opentuner.measurement.driver import MeasurementDriver  # noqa: E402
    from opentuner.measurement.inputmanager import FixedInputManager  # noqa: E402
    from opentuner.resultsdb import connect  # noqa: E402
    from opentuner.resultsdb.models import DesiredResult  # noqa: E402
    from opentuner.search.bandittechniques import AUCBanditMetaTechnique  # noqa: E402
    from opentuner.search.differentialevolution import (  # noqa: E402
        DifferentialEvolutionAlt,
        PopulationMember,
    )
    from opentuner.search.driver import SearchDriver  # noqa: E402
    from opentuner.search.evolutionarytechniques import (  # noqa: E402
        NormalGreedyMutation,
        UniformGreedyMutation,
    )
    from opentuner.search.objective import MinimizeTime  # noqa: E402
    from opentuner.search.simplextechniques import RandomNelderMead  # noqa: E402
    from opentuner.search.technique import all_techniques, register  # noqa: E402
logging.Formatter = _FORMATTER  # type: ignore[misc]  # undo opentuner.tuningrunmain's swap

#: OpenTuner's default technique, whose reproducible version is :data:`DEFAULT`
OPENTUNER_DEFAULT = "AUCBanditMetaTechniqueA"
#: the name :data:`OPENTUNER_DEFAULT` with ordered DE members is registered under
DEFAULT = "AUCBanditMetaTechniqueA.ordered"


@contextmanager
def quiet() -> Iterator[None]:
    """Silence OpenTuner's warnings (see the module docstring) inside the block only."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # SQLAlchemy 2's MovedIn20Warning
        warnings.simplefilter("ignore", ResourceWarning)
        warnings.filterwarnings("ignore", module=r"sqlalchemy(\.|$)")
        warnings.filterwarnings("ignore", module=r"opentuner(\.|$)")
        yield


class _Member(PopulationMember):
    """A DE population member hashed by its index, so sets of members have a fixed order."""

    def __init__(self, index: int, config: Any, *, submitted: bool) -> None:
        super().__init__(config, submitted=submitted)
        self.index = index

    def __hash__(self) -> int:
        return self.index


class _OrderedDE(DifferentialEvolutionAlt):
    """``DifferentialEvolutionAlt`` whose population members are :class:`_Member`."""

    def initial_population(self) -> None:
        self.population = [
            _Member(k, self.driver.get_configuration(self.manipulator.random()), submitted=False)
            for k in range(self.population_size)
        ]


def technique_names() -> tuple[str, ...]:
    """The names of OpenTuner's registered search techniques (``--technique``)."""
    with quiet():
        techniques, _ = all_techniques()
    return tuple(t.name for t in techniques)


if DEFAULT not in technique_names():  # once per process, even if this module is re-imported
    register(AUCBanditMetaTechnique([
        _OrderedDE(name="DifferentialEvolutionAlt"),
        UniformGreedyMutation(),
        NormalGreedyMutation(mutation_rate=0.3),
        RandomNelderMead(),
    ], name=DEFAULT))


class _Interface(opentuner.MeasurementInterface):
    """The measurement side is ours (:class:`OpenTunerRun` reports results), so ``run``
    is never called."""

    def run(self, desired_result: Any, input: Any, limit: Any) -> Any:  # noqa: A002
        raise NotImplementedError("OpenTunerRun reports results itself")


class _Manager(TuningRunManager):
    """``TuningRunManager`` without ``init_logging()`` (see the module docstring).

    ``TuningRunMain.__init__`` is not called: its body, less the logging set-up and the
    command-line branches (``--print-params`` ...), is repeated here (OpenTuner 0.8.8).
    """

    def __init__(self, interface: _Interface, args: Any) -> None:
        self.args = args
        self.engine, self.Session = connect(args.database)
        self.session = self.Session()
        self.tuning_run: Any = None
        self.search_driver_cls = SearchDriver
        self.measurement_driver_cls = MeasurementDriver
        self.measurement_interface = interface
        self.input_manager = interface.input_manager()
        self.manipulator = interface.manipulator()
        self.objective = interface.objective()
        self.objective_copy = copy.copy(self.objective)
        self.fake_commit = True
        self.last_commit_time = time.time()
        # TuningRunManager.__init__
        self.init()  # creates self.tuning_run
        run: Any = self.tuning_run
        run.state = "RUNNING"
        self.commit(force=True)
        self.search_driver.external_main_begin()


class OpenTunerRun:
    """One OpenTuner run minimising a time over integer parameters searched on a log scale.

    ``bounds`` maps each parameter to its inclusive ``(lower, upper)`` range; each is an
    OpenTuner ``LogIntegerParameter``. ``technique`` is a name of
    :func:`technique_names` (OpenTuner's default is ``AUCBanditMetaTechniqueA``);
    ``parallelism`` the requests made per generation (OpenTuner's ``--parallelism``).
    Callers seed Python's ``random`` (and numpy's global generator) themselves: OpenTuner
    draws from them.
    """

    def __init__(self, bounds: Mapping[str, tuple[int, int]], *, technique: str,
                 parallelism: int) -> None:
        manipulator = opentuner.ConfigurationManipulator()
        for name, (lo, hi) in bounds.items():
            manipulator.add_parameter(opentuner.LogIntegerParameter(name, lo, hi))
        args = opentuner.default_argparser().parse_args([])  # the defaults, not sys.argv
        args.database = "sqlite://"  # in memory
        args.technique = [technique]
        args.parallelism = parallelism
        args.quiet = True
        args.no_dups = True
        with quiet():
            interface = _Interface(args=args, manipulator=manipulator, project_name="odyssey",
                                   program_name="tiling", program_version="0",
                                   input_manager=FixedInputManager(), objective=MinimizeTime())
            self._manager = _Manager(interface, args)
        self.names = tuple(bounds)

    def next(self) -> tuple[Any, dict[str, int]] | None:
        """The next configuration OpenTuner wants measured, with its request (to report
        against), or None when this generation has nothing more to ask."""
        with quiet():
            request = self._manager.get_next_desired_result()
        if request is None:
            return None
        data = request.configuration.data
        return request, {n: int(data[n]) for n in self.names}

    def report(self, request: Any, time_value: float) -> None:
        """The measured time of ``request``'s configuration (smaller is better)."""
        with quiet():
            self._manager.report_result(request, opentuner.Result(time=float(time_value)))

    def add_seeds(self, configs: Sequence[Mapping[str, int]]) -> None:
        """Configurations OpenTuner requests before its technique's next ones (as with
        ``--seed-configuration``)."""
        # SearchDriver pops its seeds from the end: reversed, they come out in order
        self._manager.search_driver.seed_cfgs[:0] = [dict(c) for c in reversed(configs)]

    def history(self) -> list[tuple[str, dict[str, int], float]]:
        """Every answered request, oldest first, from OpenTuner's results database: the
        technique that made it (``seed`` for a seed), its configuration, the time reported."""
        with quiet():
            rows = (self._manager.session.query(DesiredResult)
                    .filter_by(tuning_run=self._manager.tuning_run)
                    .filter(DesiredResult.result_id.isnot(None))
                    .order_by(DesiredResult.id).all())
            return [(r.requestor, {n: int(r.configuration.data[n]) for n in self.names},
                     float(r.result.time)) for r in rows]
