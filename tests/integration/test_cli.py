"""`cutover-prep local`: exit codes, one-line errors, evidence written."""

from __future__ import annotations

import json

import psycopg
import pytest

from cutover_prep.cli import main
from tests.conftest import conninfo


def dsn_of(spec) -> str:
    host = spec.host if not spec.host.startswith("/") else "localhost"
    return f"postgresql://{spec.user}:{spec.password}@{host}:{spec.port}/{spec.database}"


@pytest.mark.postgres
def test_local_run_against_a_dsn_writes_the_evidence(sample_db, tmp_path, capsys):
    if sample_db.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    code = main(["local", "--dsn", dsn_of(sample_db), "--out", str(tmp_path), "--no-progress",
                 "--unit-mb", "4", "--database", sample_db.database])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "coverage 100.0 %" in out
    findings = json.loads((tmp_path / "findings.json").read_text())
    assert findings["coverage_pct"] == 100.0 and findings["units"]["failed"] == 0
    with psycopg.connect(conninfo(sample_db)) as conn:  # the stand-in instance carries the server's version
        assert findings["instance"]["engine_version"] == conn.execute("SHOW server_version").fetchone()[0].split()[0]
    assert "report:   " in out and (tmp_path / "report.html").exists()
    assert {p.name for p in tmp_path.iterdir()} >= {"plan.json", "units.json", "findings.json", "execution.json"}
    assert sample_db.password == "" or sample_db.password not in (tmp_path / "execution.json").read_text()
    assert conninfo(sample_db)  # the fixture is usable after the run


@pytest.mark.parametrize(("args", "code", "needle"), [
    (["local", "--dsn", "mysql://u@h/db"], 2, "--dsn must start with"),
    (["local", "--dsn", "postgresql://h/db"], 2, "--dsn needs user, host and database"),
    (["local", "--max-concurrency", "0"], 2, "--max-concurrency"),
    (["local", "--no-such-option"], 2, "No such option"),
    (["local", "--dsn", "postgresql://u:topsecret@127.0.0.1:1/db"], 3, "cannot connect to PostgreSQL"),
    (["local", "--dsn", "oracle://u:topsecret@127.0.0.1:1/svc"], 3, "cannot connect to Oracle"),
])
def test_bad_options_and_unreachable_targets_are_one_line(args, code, needle, capsys):
    assert main(args) == code
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err
    assert "topsecret" not in err
