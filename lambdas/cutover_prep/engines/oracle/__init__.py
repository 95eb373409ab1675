"""Oracle: everything the run knows about this engine, in one folder.

- ``engine``: discovery and reading for the warm-up (``OracleEngine``);
- ``sql``: the SQL text of both, built without a database (unit-tested);
- ``datafiles``: the full datafile pass (``warmup.mode`` datafiles/both): RMAN validates block ranges;
- ``bench``: the benchmark driver (``OracleBench``, see ``engines/bench.py``);
- here: the light hooks the registry (``engines.registry``) names. They import oracledb
  only when called, so reading the registry loads no database driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutover_prep.engines.locators import BaseLocator, OracleLocator

if TYPE_CHECKING:
    from cutover_prep.engines.base import ConnectionSpec, Engine


def open_engine(spec: ConnectionSpec, *, call_timeout_seconds: float | None = None,
                create_extension: bool = False) -> Engine:
    """``create_extension`` is PostgreSQL's; Oracle has nothing to install."""
    from cutover_prep.engines.oracle.engine import OracleEngine

    return OracleEngine.connect(spec, call_timeout_seconds=call_timeout_seconds)


def open_bench(spec: ConnectionSpec, database: str | None, *, call_timeout_seconds: float | None = None,
               create_extension: bool = False) -> Any:
    """One service per connection: ``database`` (PostgreSQL's per-database sessions) does not apply."""
    from cutover_prep.engines.oracle.bench import OracleBench

    return OracleBench.from_spec(spec, call_timeout_seconds=call_timeout_seconds)


def block_readable(locator: BaseLocator) -> bool:
    """A table (partition) segment: its single blocks can be read by rowid range."""
    return OracleLocator.of(locator).read == "rowid_range"
