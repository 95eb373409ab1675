"""python-oracledb's cursor as the Oracle fakes play it (one scaffold for the three fakes): a context manager
whose rows ``execute`` sets and ``fetchone`` (None when there is no row, as python-oracledb), ``fetchall`` and
iteration read. Each fake's own ``execute`` is the server it plays."""

from __future__ import annotations

from typing import Any


class FakeCursor:
    def __init__(self, db: Any) -> None:
        self.db, self.arraysize, self._rows = db, 100, []

    def __enter__(self) -> FakeCursor:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False

    def __iter__(self):
        return iter(self._rows)

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None  # python-oracledb: None when there is no row

    def fetchall(self) -> list:
        return list(self._rows)

    def execute(self, sql: str, parameters: Any = None, **binds: Any) -> FakeCursor:
        raise NotImplementedError("each fake plays its own server")
