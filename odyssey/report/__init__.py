"""``odyssey report``: one offline HTML page (and its figures as JSON) per design, search or
network, from a generated design or the ``--json`` record of ``model``, ``tune``,
``optimum`` or ``network`` (``docs/report.md``)."""

from odyssey.report.data import from_record, load_input
from odyssey.report.page import html_page, write_report

__all__ = ["from_record", "html_page", "load_input", "write_report"]
