"""Issue 33 §2: ``cutover-prep hotset`` on a MariaDB source whose performance_schema and userstat are both off
exited 1 with no way forward. The fallback needs neither: what the InnoDB buffer pool holds, from
INFORMATION_SCHEMA.INNODB_BUFFER_PAGE (``--buffer-pool``, read-only, PROCESS) or from the ``ib_buffer_pool`` file
InnoDB writes at shutdown or on ``innodb_buffer_pool_dump_now`` (``--buffer-pool-file``), offered in one line.

The formats, as the vendors document them:
- INNODB_BUFFER_PAGE: one row per page in the buffer pool, TABLE_NAME such as `` `db`.`t` `` (MariaDB adds
  `` /* Partition `p0` */``), INDEX_NAME; https://mariadb.com/kb/en/information-schema-innodb_buffer_page-table/
  and https://dev.mysql.com/doc/refman/8.0/en/information-schema-innodb-buffer-page-table.html
- ib_buffer_pool: one ``space_id,page_no`` line per page (the file ``innodb_buffer_pool_filename`` names in the
  data directory); https://mariadb.com/kb/en/innodb-buffer-pool/ ("dumping and restoring the buffer pool") and
  https://dev.mysql.com/doc/refman/8.0/en/innodb-preload-buffer-pool.html
"""

from __future__ import annotations

import pytest

from cutover_prep.engines.hotset import HotsetOptions, HotsetProblem, NoStatistics
from cutover_prep.engines.mysql import hotset

STATUS = ("10.11.19-MariaDB", 0, "OFF", "2026-11-27 20:00:00")
SIZES = [("app", "orders", 10 * 16384), ("app", "we`ird", 2 * 16384), ("app", "cold", 50 * 16384),
         ("other", "t", 16384)]
INDEXES = [("app", "orders", "by_day")]
BUFFER_PAGE = [("`app`.`orders`", 7), ("`app`.`orders` /* Partition `p0` */", 2), ("`app`.`we``ird`", 1),
               ("`mysql`.`innodb_index_stats`", 3), ("`other`.`t`", 1), ("SYS_TABLES", 4)]
SPACES = [(5, "app/orders#P#p0"), (6, "app/orders#P#p1"), (7, "app/we@0060ird"), (8, "app/cold"),
          (2, "mysql/innodb_table_stats")]


class FakeConn:
    """Answers the statements ``hotset.collect`` sends, as the server here would (rows per statement)."""

    def __init__(self, answers: dict[str, list[tuple]]) -> None:
        self.answers, self.sent = answers, []

    def cursor(self) -> FakeConn:
        return self

    def __enter__(self) -> FakeConn:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, statement: str) -> None:
        self.sent.append(statement)
        self.rows = self.answers[statement]

    def fetchall(self) -> list[tuple]:
        return self.rows


def conn() -> FakeConn:
    return FakeConn({hotset.HOTSET_STATUS_SQL: [STATUS], hotset.HOTSET_SIZES_SQL: SIZES,
                     hotset.HOTSET_INDEX_NAMES_SQL: INDEXES, hotset.HOTSET_BUFFER_PAGE_SQL: BUFFER_PAGE,
                     hotset.HOTSET_SPACES_SQL["mariadb"]: SPACES})


def test_without_statistics_the_error_offers_the_buffer_pool_in_one_line() -> None:
    with pytest.raises(NoStatistics) as caught:
        hotset.collect(conn(), "MariaDB 10.11.19", "db:3306", HotsetOptions())
    text = str(caught.value)
    assert "\n" not in text and "--buffer-pool" in text and "INNODB_BUFFER_PAGE" in text
    assert "--buffer-pool-file" in text and "innodb_buffer_pool_dump_now" in text


def test_buffer_page_names_are_parsed_as_the_server_quotes_them() -> None:
    assert hotset.buffer_page_table("`app`.`orders`") == ("app", "orders")
    assert hotset.buffer_page_table("`app`.`orders` /* Partition `p0` */") == ("app", "orders")
    assert hotset.buffer_page_table("`app`.`we``ird`") == ("app", "we`ird")
    assert hotset.buffer_page_table("SYS_TABLES") is None  # InnoDB's own dictionary pages: no table


def test_buffer_pool_ranks_tables_by_their_pages_in_the_pool() -> None:
    c = conn()
    taken = hotset.collect(c, "MariaDB 10.11.19", "db:3306", HotsetOptions(buffer_pool=True))
    assert hotset.HOTSET_BUFFER_PAGE_SQL in c.sent and hotset.HOTSET_USERSTAT_SQL not in c.sent
    got = {(r.schema, r.name): r.accesses for r in taken.relations}
    # hand-worked from BUFFER_PAGE: orders 7 + 2 (its partition p0), we`ird 1, other.t 1; mysql.* is no user table
    assert got == {("app", "orders"): 9, ("app", "we`ird"): 1, ("other", "t"): 1}
    (source,) = taken.sources
    assert source.views[0] == "information_schema.INNODB_BUFFER_PAGE" and "buffer pool" in source.figure
    orders = next(r for r in taken.relations if r.name == "orders")
    assert orders.figures == {"buffer_pool_pages": 9} and orders.segments == ["app.orders", "app.orders.by_day"]
    only_app = hotset.collect(conn(), "MariaDB", "db:3306", HotsetOptions(buffer_pool=True, databases=("app",)))
    assert {r.schema for r in only_app.relations} == {"app"}


def test_an_ib_buffer_pool_file_is_counted_per_table_through_the_tablespace_ids(tmp_path) -> None:
    dump = tmp_path / "ib_buffer_pool"
    # hand-made: space 5 (orders p0) 3 pages, 6 (orders p1) 1, 7 (we`ird) 2, 2 (mysql.*) 1, 0 (system) 2, 99 unknown
    dump.write_text("5,3\n5,4\n5,9\n6,1\n7,3\n7,4\n2,1\n0,7\n0,8\n99,1\n")
    c = conn()
    taken = hotset.collect(c, "MariaDB 10.11.19", "db:3306", HotsetOptions(buffer_pool_file=str(dump)))
    assert hotset.HOTSET_BUFFER_PAGE_SQL not in c.sent  # the file, not the view
    assert {(r.schema, r.name): r.accesses for r in taken.relations} == {("app", "orders"): 4, ("app", "we`ird"): 2}
    assert "ib_buffer_pool" in taken.sources[0].views[0]


@pytest.mark.parametrize(("text", "problem"), [("5,3\nnot a line\n", "line 2"), ("", "no page")])
def test_a_file_that_is_not_an_ib_buffer_pool_dump_is_one_line(tmp_path, text: str, problem: str) -> None:
    dump = tmp_path / "ib_buffer_pool"
    dump.write_text(text)
    with pytest.raises(HotsetProblem, match=problem) as caught:
        hotset.collect(conn(), "MariaDB", "db:3306", HotsetOptions(buffer_pool_file=str(dump)))
    assert caught.value.code == 2 and "\n" not in str(caught.value)
    with pytest.raises(HotsetProblem, match="cannot be read") as missing:
        hotset.collect(conn(), "MariaDB", "db:3306", HotsetOptions(buffer_pool_file=str(tmp_path / "nope")))
    assert "\n" not in str(missing.value)
