"""The workflow's Preflight state (``preflight.step``, issue 22) with its dependencies injected: a real
``Store`` on moto, a secret reader, and a fake preflight runner that returns a ``Report`` (the checks
themselves are tested against the real servers in tests/integration/test_preflight.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cutover_prep.access.secret_binding import SecretNotBound
from cutover_prep.dal.store import evidence_key
from cutover_prep.engines import ConnectionSpec
from cutover_prep.engines.preflight import CONNECTION, FAIL, INFO, METHOD, PASS, PRIVILEGE, Check, Context, Report
from cutover_prep.findings.failures import KNOWN_ERRORS, record_failure
from cutover_prep.models.run_input import InvalidInput, parse_run_input
from cutover_prep.models.warmup import Warmup
from cutover_prep.report import render_report, summary_markdown
from cutover_prep.settings import connection_policy
from cutover_prep.steps.preflight import PreflightFailed, run_preflight
from tests.unit.contexts import run_state
from tests.unit.stored_sections import preflight_section

PASSWORD = "pw-never-recorded-91c2"
SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-abc"


def run_doc(**sections: Any) -> dict[str, Any]:
    raw = {"run_id": "pf-1", "target": {"db_instance_identifier": "orders-rehearsal", "secret_arn": SECRET_ARN,
                                        "engine": "postgres"}, **sections}
    config = parse_run_input(raw)
    config["instance"] = {"address": "orders-rehearsal.abc.us-east-1.rds.amazonaws.com", "port": 5432}
    return config


def read_secret(binding: str = "orders-rehearsal"):
    def read(arn: str) -> str:
        assert arn == SECRET_ARN
        return json.dumps({"username": "warmer", "password": PASSWORD, "dbname": "app",
                           "dbInstanceIdentifier": binding})
    return read


class FakeRunner:
    """Records the spec and context it was given; returns the checks it was made with."""

    def __init__(self, *checks: Check) -> None:
        self.checks = list(checks)
        self.calls: list[tuple[ConnectionSpec, Context]] = []

    def __call__(self, spec: ConnectionSpec, ctx: Context) -> Report:
        self.calls.append((spec, ctx))
        target = {"host": spec.host, "port": spec.port, "database": spec.database, "user": spec.user}
        return Report(engine=spec.engine, target=target, checks=self.checks, seconds=1.25)


GOOD = (Check(CONNECTION, "connection", PASS, "PostgreSQL host:5432/app as warmer in 3 ms"),
        Check(PRIVILEGE, "app: SELECT on tables", PASS, "all 12 relations (pg_read_all_data)"),
        Check(METHOD, "app: pg_prewarm", PASS, "public.t: pg_prewarm returned 1 block"))
MISSING = Check(PRIVILEGE, "app: EXECUTE on pg_read_binary_file", FAIL,
                "not granted (GRANT EXECUTE ON FUNCTION pg_read_binary_file(text, bigint, bigint) TO warmer)")
NOT_READ_ONLY = Check(CONNECTION, "read-only session", FAIL, "default_transaction_read_only=off")


def test_a_passing_preflight_writes_its_evidence_and_a_summary_and_goes_on(store) -> None:
    run = run_doc(warmup={"databases": ["app", "sales_*"]})
    runner = FakeRunner(*GOOD)
    out = run_preflight(run_state(run), store=store, read_secret=read_secret(), preflight=runner).to_json()
    assert out == {"enabled": True, "ok": True, "failed": [], "seconds": 1.25,
                   "evidence_key": evidence_key("pf-1", "preflight.json")}
    spec, ctx = runner.calls[0]
    # the run's own connection: the endpoint RDS reported, the secret's user, the deployment's TLS mode
    assert (spec.host, spec.port, spec.database, spec.user, spec.tls) == (
        "orders-rehearsal.abc.us-east-1.rds.amazonaws.com", 5432, "app", "warmer", connection_policy().tls)
    assert ctx.databases == ("app", "sales_*") and ctx.datafiles is False and ctx.timeout_seconds == 60
    doc = store.get_json(evidence_key("pf-1", "preflight.json"))
    assert doc["ok"] is True and doc["on_failure"] == "fail" and len(doc["checks"]) == 3
    assert PASSWORD not in json.dumps(doc)
    store.start_run(run)
    run_preflight(run_state(run), store=store, read_secret=read_secret(), preflight=runner)
    item = store.get_run("pf-1").stored()
    assert item["preflight"]["ok"] is True and item["preflight"]["checks"] == {"pass": 3}
    assert item["step"] == "preflight_passed"


def test_the_datafile_pass_asks_for_its_checks() -> None:
    from cutover_prep.steps.preflight import context_of

    assert context_of(Warmup(mode="both")).datafiles is True
    assert context_of(Warmup(mode="datafiles")).datafiles is True
    assert context_of(Warmup()).datafiles is False


def test_a_failed_check_is_preflight_failed_naming_each_check_after_the_evidence_is_written(store) -> None:
    run = run_doc()
    store.start_run(run)
    runner = FakeRunner(*GOOD, MISSING, NOT_READ_ONLY)
    with pytest.raises(PreflightFailed) as err:
        run_preflight(run_state(run), store=store, read_secret=read_secret(), preflight=runner)
    message = str(err.value)
    assert "\n" not in message and PASSWORD not in message
    assert "2 check(s) failed" in message
    assert "GRANT EXECUTE ON FUNCTION pg_read_binary_file" in message and "read-only session" in message
    assert message.index("read-only session") < message.index("pg_read_binary_file")  # connection first
    doc = store.get_json(evidence_key("pf-1", "preflight.json"))
    assert doc["ok"] is False and sorted(doc["failed"]) == ["app: EXECUTE on pg_read_binary_file", "read-only session"]
    item = store.get_run("pf-1").stored()
    assert item["step"] == "preflight_failed" and item["preflight"]["ok"] is False
    # RunFailed records it by its name (a known error), the cause as the message
    failed = record_failure("pf-1", {"Error": "PreflightFailed", "Cause": json.dumps(
        {"errorMessage": message, "errorType": "PreflightFailed"})}, store=store)
    assert "PreflightFailed" in KNOWN_ERRORS and failed["Error"] == "PreflightFailed"
    assert store.get_run("pf-1").cause == message


def test_a_long_detail_is_cut_so_that_the_message_stays_one_short_line(store) -> None:
    long = Check(METHOD, "app: tid_range_scan", FAIL, "x " * 2000)
    with pytest.raises(PreflightFailed) as err:
        run_preflight(run_state(run_doc()), store=store, read_secret=read_secret(), preflight=FakeRunner(long))
    assert len(str(err.value)) < 600 and "..." in str(err.value)


def test_many_failed_checks_are_named_up_to_a_bound_and_counted(store) -> None:
    census = [Check("census", f"app/public.t{i}#table.main", FAIL, "no privilege") for i in range(20)]
    with pytest.raises(PreflightFailed) as err:
        run_preflight(run_state(run_doc()), store=store, read_secret=read_secret(),
                      preflight=FakeRunner(*census, MISSING))
    message = str(err.value)
    assert "21 check(s) failed: privilege app: EXECUTE on pg_read_binary_file" in message  # grants first
    assert "and 13 more" in message and "t6#" in message and "t7#" not in message
    assert len(store.get_json(evidence_key("pf-1", "preflight.json"))["failed"]) == 21


def test_on_failure_warn_records_the_failure_and_goes_on(store) -> None:
    run = run_doc(preflight={"on_failure": "warn"})
    store.start_run(run)
    out = run_preflight(
        run_state(run), store=store, read_secret=read_secret(), preflight=FakeRunner(*GOOD, MISSING)).to_json()
    assert out["ok"] is False and out["failed"] == ["app: EXECUTE on pg_read_binary_file"]
    assert store.get_run("pf-1").preflight.on_failure == "warn"


def test_turned_off_it_connects_nowhere_and_says_so(store) -> None:
    run = run_doc(preflight={"enabled": False})
    store.start_run(run)
    runner = FakeRunner(MISSING)

    def no_secret(arn: str) -> str:
        raise AssertionError("the secret is not read when the preflight is off")

    out = run_preflight(run_state(run), store=store, read_secret=no_secret, preflight=runner).to_json()
    assert out == {"enabled": False, "ok": None}
    assert runner.calls == [] and not store.exists(evidence_key("pf-1", "preflight.json"))
    assert store.get_run("pf-1").stored()["preflight"] == {"enabled": False}


def test_a_secret_of_another_instance_is_refused_before_the_preflight_connects(store) -> None:
    runner = FakeRunner(*GOOD)
    with pytest.raises(SecretNotBound):
        run_preflight(run_state(run_doc()), store=store, read_secret=read_secret("orders-prod"), preflight=runner)
    assert runner.calls == []


@pytest.mark.parametrize("section", [{"enabled": "yes"}, {"on_failure": "ignore"}, {"enabled": True, "extra": 1}])
def test_the_input_section_is_strict(section: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput, match="preflight"):
        run_doc(preflight=section)


def test_defaults_are_enabled_and_fail() -> None:
    assert run_doc()["preflight"] == {"enabled": True, "on_failure": "fail"}


# ---- the findings section and the report -------------------------------------------------------------

def report_json(*checks: Check, on_failure: str = "fail") -> dict[str, Any]:
    rep = Report(engine="postgres", target={"host": "h", "port": 5432, "database": "app", "user": "warmer"},
                 checks=list(checks), seconds=2.5)
    return {"run_id": "pf-1", "on_failure": on_failure, **rep.to_json()}


def test_the_findings_section_keeps_each_check_without_its_data() -> None:
    section = preflight_section({}, report_json(*GOOD, Check(CONNECTION, "version", INFO, "PostgreSQL 16.4")))
    assert section is not None
    assert section["ok"] is True and section["seconds"] == 2.5 and section["failed"] == []
    assert [c["name"] for c in section["checks"]][:2] == ["connection", "version"]  # connection checks first
    assert set(section["checks"][0]) == {"kind", "name", "status", "detail", "bytes"}
    assert preflight_section({}, None) is None  # a run from before the Preflight state
    assert preflight_section({"preflight": {"enabled": False}}, report_json(*GOOD)) == {"enabled": False}


def test_the_report_shows_one_line_a_check_status_first() -> None:
    findings = {"run_id": "pf-1", "preflight": preflight_section({}, report_json(
        *GOOD, MISSING, on_failure="warn"))}
    md = summary_markdown(findings)
    block = md.split("## Preflight", 1)[1].split("\n## ", 1)[0]
    assert "preflight FAILED in 2.5 s: 1 check(s): app: EXECUTE on pg_read_binary_file" in block
    assert "on_failure warn" in block
    lines = [ln for ln in block.splitlines() if ln.startswith("- ")]
    # connection, privileges, methods: one line each, status first
    assert [ln.split()[1] for ln in lines] == ["PASS", "PASS", "FAIL", "PASS"]
    assert "GRANT EXECUTE ON FUNCTION pg_read_binary_file" in lines[2]
    html = render_report(findings)
    assert 'id="preflight-checks"' in html and html.count("<td>PASS</td>") == 3 and "<td>FAIL</td>" in html
    off = summary_markdown({"run_id": "pf-1", "preflight": {"enabled": False}})
    assert "preflight not run (input preflight.enabled false)" in off
    assert "## Preflight" not in summary_markdown({"run_id": "pf-1"})
