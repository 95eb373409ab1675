"""A session lost in the middle of the MySQL/MariaDB census is marked dropped, so the census's next attempt connects
again at once (issue 32 §4: a restart or failover under the end census), as a lost read already was."""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

from cutover_prep.engines.base import ConnectionLost
from cutover_prep.engines.mysql import sql as q
from cutover_prep.engines.mysql.engine import MySQLEngine


class _LostCursor:
    def __enter__(self) -> _LostCursor:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def execute(self, statement: str, *args: Any) -> None:
        # CR_SERVER_LOST (2013): "Lost connection to MySQL server during query", what a restart does to a session
        raise pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query")


class _Conn:
    def cursor(self) -> _LostCursor:
        return _LostCursor()

    def close(self) -> None:
        pass


def test_a_session_lost_during_the_census_is_marked_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = MySQLEngine(_Conn(), q.Dialect.from_version("10.11.6-MariaDB"), 16384, "plaintext", False)
    monkeypatch.setattr(engine, "_catalogue", lambda: (None, []))  # the first half of the census went through
    with pytest.raises(ConnectionLost):
        engine.census()
    assert engine._dropped  # the next call opens a fresh session (``_live``) instead of failing on the dead one
