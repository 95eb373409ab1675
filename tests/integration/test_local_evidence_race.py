"""Tracker issue 24: a local run failed at random in Finalize with moto's ``ValueError: I/O operation
on closed file`` reading ``storage-emulation.json``, and printed a summary contradicting itself.

The runner's polling thread rewrote that object every second while the workflow's threads (Discover's
estimate, Finalize) read it. moto's S3 replaces an object by closing the old one's buffer
(``moto.s3.models.FakeKey.dispose``, called from ``_VersionedKeyStore.setlist`` on a PUT), so a GET
that had already looked the old object up then reads a closed file. On AWS a GET racing a PUT returns
the old or the new object ("Amazon S3 data consistency model": strong read-after-write consistency; a
read never fails because of a concurrent write): the run must not depend on the interleaving.

The test makes the interleaving certain instead of rare: every read of the evidence object by a thread
of the workflow waits, between moto's lookup of the object and the read of its bytes, until the
runner's polling thread has completed one more poll. The run must still succeed and its findings carry
the evidence.
"""

from __future__ import annotations

import json
import threading

import pymysql
import pytest
from moto.s3.models import FakeKey

from cutover_prep.cli.main import main
from cutover_prep.dal.store import EMULATION_EVIDENCE
from cutover_prep.engines.mysql.sample_db import create_sample
from cutover_prep.local.emulated import DSN_REASON
from cutover_prep.local.harness import LocalAws

pytestmark = pytest.mark.mysql

SAFETY_NET_S = 120  # only if the polling thread stopped polling: never reached when the run goes on


def test_a_poll_between_lookup_and_read_of_the_emulation_evidence_does_not_fail_the_run(
        mysql_admin, mysql_database, tmp_path, capsys, caplog, monkeypatch) -> None:
    database = mysql_database("local_evidence_race")
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, autocommit=True, charset="utf8mb4")
    try:
        create_sample(conn, database, rows=200, blob_kib=4)
    finally:
        conn.close()

    polls = threading.Condition()
    count = {"polls": 0, "reads_held": 0}
    original_wait, original_value = LocalAws.wait, FakeKey.value

    def wait(self, execution_arn, *, on_poll=None, **kwargs):
        def poll() -> None:
            if on_poll is not None:
                on_poll()
            with polls:
                count["polls"] += 1
                polls.notify_all()
        return original_wait(self, execution_arn, on_poll=poll, **kwargs)

    def value(key):
        if key.name.endswith("/" + EMULATION_EVIDENCE) and threading.current_thread() is not threading.main_thread():
            with polls:  # a reader in the workflow: the object is looked up; one whole poll passes
                seen = count["polls"]
                if polls.wait_for(lambda: count["polls"] > seen, timeout=SAFETY_NET_S):
                    count["reads_held"] += 1
        return original_value.fget(key)

    monkeypatch.setattr(LocalAws, "wait", wait)
    monkeypatch.setattr(FakeKey, "value", property(value, original_value.fset))
    auth = mysql_admin.user + (f":{mysql_admin.password}" if mysql_admin.password else "")
    code = main(["local", "--dsn", f"mariadb://{auth}@{mysql_admin.host}:{mysql_admin.port}/{database}",
                 "--include-schema", database, "--out", str(tmp_path), "--no-progress", "--no-benchmark"])
    out = capsys.readouterr().out
    assert count["reads_held"] >= 2, count  # Discover's estimate and Finalize each read it across a poll
    # exit 0, READY: InnoDB's system tablespace has no SQL read path, named as engine-internal (issue 33)
    assert code == 0 and "SUCCEEDED" in out and "(innodb).innodb_system" in out and "engine-internal" in out, out
    assert "emulation evidence not read" not in caplog.text  # Discover's estimate logs the error and goes on
    findings = json.loads((tmp_path / "findings.json").read_text())
    assert findings["storage_emulation"] == {"emulated": False, "reason": DSN_REASON}
    assert findings["coverage_pct"] == 100.0
