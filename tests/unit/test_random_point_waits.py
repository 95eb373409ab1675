"""A random benchmark point carries the wait events of its reader sessions (issue 22, finding 4: "record
the wait events actually seen per point"). ``OracleBench.reader_waits`` collects one V$SESSION_EVENT delta
per closed reader session (Database Reference, "V$SESSION_EVENT"); the runner calls the driver's optional
``random_point_notes`` hook once the point's readers are closed, so the sum lands in that point's notes,
the probes' waits in the probe, and never in the next point. Drivers without the hook are unchanged."""

from __future__ import annotations

import itertools

from cutover_prep.engines.bench import PointSpec
from cutover_prep.engines.oracle import bench as b
from cutover_prep.measure.runner import run_point, run_probe
from tests.unit.test_oracle_bench import TARGET, Conn, ora_error

BLOCK = {"locator": TARGET.locator, "file_id": 4, "block": 4242, "block_size": 8192}


class Picker:
    def stream(self):
        return itertools.repeat(BLOCK)


def oracle_bench(per_session_waits, sessions=1):
    """Each reader session sees V$SESSION_EVENT empty when it opens (the runner opens them all before the
    point starts) and ``per_session_waits`` when it closes."""
    shared = {"log": [], "answers": {"v$": [], "product_component_version": []}, "fail": {}, "delay": 0.0,
              "conns": []}
    calls = itertools.count()
    shared["answers"]["v$session_event"] = lambda: [] if next(calls) < sessions else per_session_waits
    return b.OracleBench(lambda: Conn(shared)), shared


def test_a_random_point_records_the_sum_of_its_reader_sessions_waits():
    bench, _ = oracle_bench([("db file sequential read", 50, 250_000), ("SQL*Net message from client", 50, 10)],
                            sessions=2)
    spec = PointSpec("random-02", "random", 0.05, sessions=2)
    point = run_point(bench, spec, target=None, picker=lambda i: Picker(), block_size=8192)
    assert bench.wait_events["random-02"] == {"db file sequential read": {"waits": 100, "seconds": 0.5},
                                              "SQL*Net message from client": {"waits": 100, "seconds": 2e-05}}
    assert any(n.startswith("wait events of the 2 random sessions (V$SESSION_EVENT): db file sequential read 100 "
                            "waits 0.500 s") for n in point.notes)
    assert bench.reader_waits == []  # taken: nothing left for the next point


def test_random_reads_served_from_the_cache_or_by_direct_path_say_so():
    bench, _ = oracle_bench([("direct path read", 5, 5_000)])
    point = run_point(bench, PointSpec("random-01", "random", 0.02, sessions=1), target=None,
                      picker=lambda i: Picker(), block_size=8192)
    assert any("direct path reads in the random sessions: Oracle read some blocks around the buffer cache" in n
               for n in point.notes)
    bench, _ = oracle_bench([])
    point = run_point(bench, PointSpec("random-01", "random", 0.02, sessions=1), target=None,
                      picker=lambda i: Picker(), block_size=8192)
    assert any("served from the buffer cache" in n for n in point.notes)


def test_the_probe_keeps_its_own_waits_and_the_next_point_does_not_get_them():
    bench, _ = oracle_bench([("db file sequential read", 3, 9_000)])
    probe = run_probe(bench, [BLOCK] * 3, phase="cold", max_seconds=5)
    assert bench.wait_events["probe-cold"] == {"db file sequential read": {"waits": 3, "seconds": 0.009}}
    assert any("db file sequential read 3 waits" in n for n in probe["notes"])
    assert bench.reader_waits == []


def test_without_select_on_v_session_event_the_point_says_so():
    bench, shared = oracle_bench([])
    shared["fail"]["v$session_event"] = ora_error(942)
    point = run_point(bench, PointSpec("random-01", "random", 0.02, sessions=1), target=None,
                      picker=lambda i: Picker(), block_size=8192)
    assert "no SELECT on V$SESSION_EVENT: the point's wait events are not recorded" in point.notes


class NoHookDriver:
    """A driver without the optional hook (PostgreSQL, MySQL): the runner does not ask."""

    engine = "x"

    def counters(self):
        return {}

    def latency_histogram(self):
        return None

    def counts_reads_of(self, spec):
        return False

    def random_reader(self):
        return type("R", (), {"read_block": lambda self, *a: None, "close": lambda self: None})()


def test_a_driver_without_the_hook_is_unchanged():
    point = run_point(NoHookDriver(), PointSpec("random-01", "random", 0.02, sessions=1), target=None,
                      picker=lambda i: Picker(), block_size=8192)
    assert not any("wait events" in n for n in point.notes)
    assert "notes" not in run_probe(NoHookDriver(), [BLOCK], phase="cold", max_seconds=1)
