"""`cutover-prep local --dsn`: the URL of every engine, and PostgreSQL's keyword conninfo (issue 16)."""

from __future__ import annotations

import psycopg
import pytest

from cutover_prep.cli.main import main
from cutover_prep.local.runner import UsageProblem, check_reachable, parse_dsn


def test_keyword_conninfo_is_the_same_target_as_the_url():
    url = parse_dsn("postgresql://app%20user:p%40ss@db.example.com:5433/orders")
    assert parse_dsn("host=db.example.com port=5433 dbname=orders user='app user' password=p@ss") == url
    # libpq's own quoting and escapes
    spec = parse_dsn(r"host=h dbname=d user=u password='it\'s a pw'")
    assert (spec.engine, spec.port, spec.password) == ("postgres", 5432, "it's a pw")
    # a unix socket directory, which the URL form cannot say
    assert parse_dsn("host=/var/run/postgresql dbname=d user=u").host == "/var/run/postgresql"


@pytest.mark.parametrize(("dsn", "words"), [
    ("host=h dbname=d", "--dsn needs user"),
    ("host=h dbname=d user=u sslcert=c.pem", "sslcert: not used by cutover-prep local"),  # sslmode: test_dsn_tls
    ("host=h dbname=d user=u password=top secret", "not a valid keyword conninfo"),
    ("host=a,b dbname=d user=u", "one host"),
    ("host=h dbname=d user=u port=0", "port that is not a number"),
    ("host=h dbname=d user=u port=abc", "port that is not a number"),
])
def test_bad_conninfo_is_one_line_without_the_password(dsn, words, capsys):
    with pytest.raises(UsageProblem, match=words):
        parse_dsn(dsn)
    assert main(["local", "--dsn", dsn]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "secret" not in err


@pytest.mark.postgres
def test_conninfo_reaches_the_real_server():
    conninfo = "host=127.0.0.1 port=5432 dbname=postgres user=postgres"
    try:
        psycopg.connect(conninfo, connect_timeout=3).close()
    except psycopg.Error:
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    check_reachable(parse_dsn(conninfo))  # raises TargetUnreachable otherwise
