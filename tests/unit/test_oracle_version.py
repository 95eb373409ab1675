"""Issue 22, finding 7: the version reported is the release update, not the release.

Database Reference, "PRODUCT_COMPONENT_VERSION" (readable by every user): from 18c, VERSION is
the release only ('19.0.0.0.0') and VERSION_FULL the release update ('19.24.0.0.0'); before
18c there is no VERSION_FULL column (ORA-00904: invalid identifier) and VERSION is the full one
('12.2.0.1.0'). V$INSTANCE has the same two columns, but needs SELECT_CATALOG_ROLE."""

from __future__ import annotations

from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle.bench import OracleBench
from tests.unit.test_oracle_bench import Conn, executed, ora_error


def shared_db():
    return {"log": [], "answers": {"v$": [], "product_component_version": [("19.0.0.0.0",)]}, "fail": {},
            "delay": 0.0, "conns": []}


def test_version_full_is_reported_where_the_column_exists():
    shared = shared_db()
    shared["answers"][q.VERSION_FULL_SQL] = [("19.24.0.0.0",)]
    assert OracleBench(lambda: Conn(shared)).capabilities()["server_version"] == "19.24.0.0.0"
    assert q.VERSION_FULL_SQL == ("SELECT version_full FROM product_component_version "
                                  "WHERE product LIKE 'Oracle%' AND ROWNUM = 1")


def test_before_18c_the_version_column_is_the_full_version():
    shared = shared_db()
    shared["fail"]["version_full"] = ora_error(904)  # ORA-00904: "VERSION_FULL": invalid identifier
    shared["answers"]["product_component_version"] = [("12.2.0.1.0",)]
    assert OracleBench(lambda: Conn(shared)).capabilities()["server_version"] == "12.2.0.1.0"
    assert executed(shared, "SELECT version FROM product_component_version")
