"""The local run's choice of storage: the emulated volume, or one line saying why not."""

from __future__ import annotations

import pytest

from cutover_prep.local import emulated
from cutover_prep.local.emulated import DSN_REASON, Emulation, Storage
from cutover_prep.local.runner import LocalOptions, UsageProblem, _profile, run_local


def test_without_emulation_the_evidence_says_why():
    assert Emulation(reason=DSN_REASON).evidence() == {"emulated": False, "reason": DSN_REASON}
    assert Emulation(reason=DSN_REASON).instance() == {}  # the stand-in keeps its defaults, the findings drop them


def test_storage_flags_with_a_dsn_are_a_usage_error_naming_them():
    options = LocalOptions(dsn="postgresql://u:p@127.0.0.1:5432/db", storage=Storage(storage_type="gp2", iops=3000),
                           progress=False)
    with pytest.raises(UsageProblem, match=r"--storage-type, --iops: .*with --dsn there is no emulation"):
        run_local(options)


def test_a_bad_profile_option_is_one_line_naming_the_flag():
    with pytest.raises(UsageProblem, match="--instance-class"):
        _profile(LocalOptions(storage=Storage(instance_class="db.nope.huge")))
    assert _profile(LocalOptions(emulate=False)) is None
    assert _profile(LocalOptions(storage=Storage(storage_type="gp2", allocated_gb=200))).storage_type == "gp2"


def test_no_fuse_runs_the_demo_on_the_ordinary_disk_and_says_why(monkeypatch, capsys):
    monkeypatch.setattr(emulated, "unavailable", lambda: "no /dev/fuse; run `make fuse` as root")
    entered = []

    class FakeServer:
        def __init__(self, size_mb, volume=None, restored=None):
            entered.append((size_mb, volume, restored))

        def __enter__(self):
            return "spec", None

        def __exit__(self, *exc):
            return False

    import cutover_prep.engines.postgres.sample_db as sample_db
    monkeypatch.setattr(sample_db, "embedded_postgres", FakeServer)
    with emulated.demo_database(10, object()) as (spec, emulation):
        assert spec == "spec" and not emulation.active
    assert entered == [(10, None, None)]
    assert emulation.evidence()["reason"] == "no /dev/fuse; run `make fuse` as root"
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["cutover-prep: no /dev/fuse; run `make fuse` as root; the demo runs without a first-touch penalty"]
