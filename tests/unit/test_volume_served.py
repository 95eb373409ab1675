"""The volume's record of when it had reads in hand (``volume.served``, ``findings.emulation.warmup_served``),
issue 24 §5: a warm-up whose readers starve (the local harness's Python on a busy machine) leaves the volume
idle between reads; the volume's own rate is the bytes over the time it had reads, and the idle time is
said as such, not folded into the storage's figure. Expected values come from the intervals the test
drives on a fake clock, not from the code under test."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cutover_prep.findings.emulation import storage_emulation, warmup_served
from cutover_prep.local.volume.served import ServedWork
from tests.unit.fake_clock import FakeClock

KIB, MIB = 1024, 2**20


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def test_concurrent_reads_count_their_busy_time_once_and_idle_gaps_not_at_all():
    clock = FakeClock(start=1000.0)
    served = ServedWork(clock)
    served.begin()                      # 1000.0: a read
    clock.now = 1000.2
    served.begin()                      # 1000.2: another, overlapping
    clock.now = 1000.5
    served.end(128 * KIB)               # 1000.5
    clock.now = 1000.7
    served.end(128 * KIB)               # 1000.7: busy 1000.0-1000.7
    clock.now = 1003.0                  # 2.3 s with nothing in hand (the readers' own time)
    served.begin()
    clock.now = 1003.4
    served.end(64 * KIB)                # busy 1003.0-1003.4
    rows = served.seconds()
    assert [r[0] for r in rows] == [1000, 1003]
    assert rows[0][1] == 256 * KIB and rows[0][2] == pytest.approx(0.7)
    assert rows[0][3] == pytest.approx(0.2 * 1 + 0.3 * 2 + 0.2 * 1)  # read-seconds: one, two, then one in hand
    assert rows[1][1] == 64 * KIB and rows[1][2] == pytest.approx(0.4) and rows[1][3] == pytest.approx(0.4)


def test_a_busy_stretch_is_spread_over_the_seconds_it_covers_and_a_read_in_hand_counts_up_to_now():
    clock = FakeClock(start=2000.6)
    served = ServedWork(clock)
    served.begin()
    clock.now = 2002.1
    served.end(MIB)
    served.begin()
    clock.now = 2002.5
    rows = served.seconds()             # the second read is still in hand
    assert [(r[0], r[2]) for r in rows] == [(2000, pytest.approx(0.4)), (2001, pytest.approx(1.0)),
                                            (2002, pytest.approx(0.5))]
    assert sum(r[1] for r in rows) == MIB


def test_the_warmups_window_sums_its_seconds_into_the_volumes_own_rate():
    # 10 s of warm-up; the volume had reads for 2 s of it (0.5 s in each of 4 seconds), 25 MiB in all;
    # a probe's read before the window and one after do not count
    # (two reads in hand while busy: 1.0 read-second in each); a daemon before the fourth column: no mean
    seconds = [[995, 8 * KIB, 0.06, 0.06], *[[1000 + k, 25 * MIB // 4, 0.5, 1.0] for k in (1, 3, 5, 7)],
               [1015, 8 * KIB, 0.02, 0.02]]
    served = warmup_served(seconds, iso(1000.0), iso(1010.0), ceiling_mib_s=15.625)
    assert served is not None
    assert served._asdict() == {"bytes": 25 * MIB, "busy_seconds": 2.0, "window_seconds": 10.0, "busy_share": 0.2,
                                "mib_per_s": 12.5, "to_ceiling": 0.8, "reads_in_hand": 2.0}
    older = warmup_served([r[:3] for r in seconds], iso(1000.0), iso(1010.0), ceiling_mib_s=15.625)
    assert older is not None and older.reads_in_hand is None and older.to_ceiling == 0.8
    assert warmup_served(seconds, None, iso(1010.0), ceiling_mib_s=15.625) is None
    assert warmup_served([[995, 1, 0.1]], iso(1000.0), iso(1010.0), ceiling_mib_s=15.625) is None


def test_the_findings_carry_the_sum_not_the_per_second_record():
    evidence = {"emulated": True, "ceiling_mib_per_s": 15.625,
                "counters": {"reads": 4, "served_seconds": [[1001, 25 * MIB, 2.0]]}}
    section = storage_emulation(evidence, 2.5, (iso(1000.0), iso(1010.0)))
    assert section["warmup_to_ceiling"] == 0.16  # the warm-up end to end: the product's and the harness's time too
    assert section["warmup_served"]["to_ceiling"] == 0.8  # the volume's, while it had reads
    assert "served_seconds" not in section["counters"] and section["counters"]["reads"] == 4
    assert evidence["counters"]["served_seconds"]  # the evidence itself untouched


def test_the_storage_line_gives_both_rates_labelled_in_every_rendering():
    from cutover_prep.report import summary_markdown
    from cutover_prep.report.terminal import terminal_lines
    from cutover_prep.report.view import storage_emulation_line

    evidence = {"emulated": True, "ceiling_mib_per_s": 15.625, "hydrated_pct": 100.0, "first_touch_ms": 43.0,
                "profile": {"storage_type": "gp3", "allocated_gb": 100, "time_scale": 8,
                            "instance_class": "db.t3.medium"},
                "counters": {"served_seconds": [[1001, 25 * MIB, 2.0, 4.0]]}}
    findings = {"storage_emulation": storage_emulation(evidence, 2.5, (iso(1000.0), iso(1010.0)))}
    line = storage_emulation_line(findings)
    assert "warm-up 2.5 MiB/s = 0.16× the 15.6 MiB/s ceiling" in line  # end to end, as before
    assert ("the volume, while it had the warm-up's reads in hand (2.0 s of 10.0 s), served 12.5 MiB/s = 0.80× "
            "the ceiling (emulated clock: 100 MiB/s) with 2 reads in hand on average") in line
    assert any(line in text for text in terminal_lines(findings))
    assert line in summary_markdown(findings, findings_uri="s3://b/f", report_uri="s3://b/r")
