"""Issue 32 §8.4: a name or pattern of the run input longer than any name the engine can hold is refused,
in one line naming the field, instead of a run that matches nothing.

The limits are the vendors' (an identifier's bytes are at least its characters in every character set,
so a byte limit bounds the characters too):
- PostgreSQL: "The system uses no more than NAMEDATALEN-1 bytes of an identifier ... By default,
  NAMEDATALEN is 64 so the maximum identifier length is 63 bytes" (PostgreSQL manual, 4.1.1 Identifiers
  and Key Words, https://www.postgresql.org/docs/current/sql-syntax-lexical.html#SQL-SYNTAX-IDENTIFIERS).
- MySQL: database, table, column ... 64 characters (MySQL 8.4 Reference Manual, 11.2.1 Identifier Length
  Limits, https://dev.mysql.com/doc/refman/8.4/en/identifier-length.html); MariaDB the same (MariaDB
  Knowledge Base, Identifier Names, https://mariadb.com/kb/en/identifier-names/#maximum-length).
- Oracle: with COMPATIBLE 12.2 or higher, names are 1 to 128 bytes; each part of a dotted name up to 128
  bytes (Oracle Database SQL Language Reference 19c, Database Object Names and Qualifiers,
  https://docs.oracle.com/en/database/oracle/oracle-database/19/sqlrf/Database-Object-Names-and-Qualifiers.html).
A glob may be longer than the names it matches ("*", "[Aa]"): it is refused only when it could match
nothing (its shortest match, or a run of plain characters in a dotted pattern, is longer than the limit).
"""

from __future__ import annotations

from typing import Any

import pytest

from cutover_prep.models.run_input import InvalidInput, parse_run_input

ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbC123"
POSTGRES, MYSQL, ORACLE = 63, 64, 128  # the vendors' limits above, in characters at most
HOT = {"server": "s", "taken_at": "t", "sources": ["statistics: v"], "relations": 1}


def run(engine: str | None = None, database: str | None = None, **warmup: Any) -> dict[str, Any]:
    target = {"db_instance_identifier": "prod-db-1", "secret_arn": ARN}
    target.update({k: v for k, v in (("engine", engine), ("database", database)) if v is not None})
    return {"target": target, "warmup": warmup}


def refused(raw: dict[str, Any]) -> str:
    with pytest.raises(InvalidInput) as info:
        parse_run_input(raw)
    assert "\n" not in str(info.value)
    return str(info.value)


@pytest.mark.parametrize(("raw", "field"), [
    (run("postgres", database="d" * (POSTGRES + 1)), "target.database"),
    (run("mysql", database="d" * (MYSQL + 1)), "target.database"),
    (run("mariadb", databases=["s" * (MYSQL + 1)]), "warmup.databases.0"),
    (run("postgres", databases=["d" * (POSTGRES + 1)]), "warmup.databases.0"),
    (run("postgres", include_schemas=["s" * (POSTGRES + 1) + "*"]), "warmup.include_schemas.0"),
    (run("mysql", exclude_schemas=["?" * (MYSQL + 1)]), "warmup.exclude_schemas.0"),
    (run("postgres", priority=["app." + "t" * (POSTGRES + 1)]), "warmup.priority.0"),
    (run(None, include_schemas=["s" * (ORACLE + 1)]), "warmup.include_schemas.0"),  # no engine: the largest
    (run(None, priority=["*." + "t" * (ORACLE + 1) + "*"]), "warmup.priority.0"),
    (run(None, hot_set={**HOT, "engine": "postgres", "names": ["db/app." + "t" * (POSTGRES + 1)]}),
     "warmup.hot_set.names.0"),  # the hot set's own engine
])
def test_a_name_longer_than_the_engine_holds_is_refused(raw, field):
    assert refused(raw).startswith(field + ":")


@pytest.mark.parametrize("raw", [
    run("postgres", database="d" * POSTGRES, include_schemas=["*" + "s" * POSTGRES + "*"]),
    run("postgres", priority=["db/" + "s" * POSTGRES + "." + "t" * POSTGRES]),
    run("mysql", database="d" * MYSQL, databases=["[Aa]" * MYSQL]),  # a long glob that still matches
    run("oracle", database="ORCL", include_schemas=["O" * ORACLE]),
    run(None, priority=["O" * ORACLE + "." + "T" * ORACLE]),  # Oracle's longest OWNER.NAME: 257 characters
    run(None, include_schemas=["s" * ORACLE]),
    run(None, hot_set={**HOT, "engine": "oracle", "names": ["O" * ORACLE + "." + "T" * ORACLE]}),
    run(None, hot_set={**HOT, "engine": "postgres", "names": ["d" * POSTGRES + "/" + "s" * POSTGRES + "."
                                                              + "t" * POSTGRES]}),
])
def test_the_longest_names_the_engines_hold_are_accepted(raw):
    parse_run_input(raw)


def test_estimate_names_the_field_of_a_glob_that_can_match_nothing(capsys):
    from cutover_prep.cli.main import main

    code = main(["estimate", "--dsn", "postgresql://u@127.0.0.1:1/db", "--database", "d" * (ORACLE + 2)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("cutover-prep: warmup.databases.0: can match nothing"), err
