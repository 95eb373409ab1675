"""``cutover-prep preflight``: each read method and privilege the plan needs, proven on the live target.

The checks are engine-neutral data (``Check``, ``Report``, ``Context``), on the engines' floor with the
helpers the hooks prove them with (``engines/preflight.py``); how each engine proves its connection, grants
and read methods lives in its own folder (``engines/<engine>/preflight.py``), found through the registry
(``EngineFamily.preflight``). ``runner.run`` calls the hook and makes the report;
``census_checks`` turns an engine's census into the lines of what the plan cannot read.

Nothing here writes to the database: the hooks read through the engines' read-only sessions.
"""

from cutover_prep.engines.preflight import FAIL, INFO, PASS, WARN, Check, Context, Report, census_checks

__all__ = ["FAIL", "INFO", "PASS", "WARN", "Check", "Context", "Report", "census_checks"]
