"""`cutover-prep local`'s progress: a bar per phase on a terminal, plain lines anywhere else."""

from __future__ import annotations

import io
import re

from cutover_prep.dal.records.run import PointItem, RunItem
from cutover_prep.dal.records.units import UnitProgress
from cutover_prep.local import runner
from cutover_prep.local.runner import Progress

MIB = 2**20


def run_item(run_id: str, attributes: dict) -> RunItem | None:
    """The run item as the store reads it (None: not written yet)."""
    return RunItem.read({"run_id": run_id, **attributes}) if attributes else None


class FakeStore:
    """The two reads Progress makes, from a run item the test moves along (records, as the store gives them)."""

    def __init__(self) -> None:
        self.run: dict = {}
        self.done_points: list[dict] = []

    def get_run(self, run_id: str) -> RunItem | None:
        return run_item(run_id, self.run)

    def points(self, run_id: str):
        return iter([PointItem.read(p) for p in self.done_points])


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _drive(progress: Progress, store: FakeStore) -> None:
    store.run = {"bytes_planned": 100 * MIB, "bytes_read": 0, "units_total": 4, "units_done": 0, "units_failed": 0}
    progress.poll()
    store.run.update(bytes_read=50 * MIB, units_done=2)
    progress.poll()
    store.run.update(bytes_read=100 * MIB, units_done=4, step="benchmark", benchmark_points=5)
    store.done_points = [{"point_id": "probe-cold", "status": "DONE"}, {"point_id": "seq-8", "status": "DONE"},
                         {"point_id": "seq-16", "status": "FAILED"}, {"point_id": "rnd-1", "status": "RUNNING"}]
    progress.poll()
    store.done_points += [{"point_id": "rnd-2", "status": "DONE"}]
    progress.close()


def test_piped_output_gets_plain_lines_with_the_benchmark_points(monkeypatch):
    stream, store = io.StringIO(), FakeStore()
    progress = Progress(store, "r", True, stream=stream)
    _drive(progress, store)
    text = stream.getvalue()
    assert "\r" not in text and "\x1b" not in text  # no tqdm frames in a CI log
    lines = text.splitlines()
    assert all(line.startswith("cutover-prep: ") for line in lines), lines
    assert lines[0].startswith("cutover-prep: warm-up: 0.0 of 100.0 MiB (0 %), 0/4 units, 0 failed")
    # a new phase prints at once; inside a phase at most one line per NON_TTY_INTERVAL_S, and one at the end
    assert "cutover-prep: benchmark: 2/5 points" in lines  # probes are not benchmark points
    assert lines[-1] == "cutover-prep: benchmark: 3/5 points"
    assert not any("50.0 of 100.0" in line for line in lines)  # 2nd poll came within the interval


def test_piped_output_prints_again_after_the_interval(monkeypatch):
    stream, store = io.StringIO(), FakeStore()
    progress = Progress(store, "r", True, stream=stream)
    monkeypatch.setattr(Progress, "NON_TTY_INTERVAL_S", 0.0)
    _drive(progress, store)
    assert "cutover-prep: warm-up: 50.0 of 100.0 MiB (50 %), 2/4 units, 0 failed" in stream.getvalue()


def test_on_a_terminal_the_benchmark_has_its_own_bar_of_points():
    stream, store = Terminal(), FakeStore()
    progress = Progress(store, "r", True, stream=stream)
    _drive(progress, store)
    frames = [f for f in re.split(r"[\r\n]", stream.getvalue()) if f.strip()]
    warm = [f for f in frames if f.lstrip("\x1b[A").startswith("warm-up")]
    bench = [f for f in frames if "benchmark" in f]
    assert warm and "100.0 of 100.0 MiB (100 %), 4/4 units, 0 failed" in warm[-1]  # as the 'warm-up ended' line
    assert bench and "3/5 points" in bench[-1]
    assert not any("B/s" in f for f in bench)  # no falling warm-up MiB/s while the points run
    assert not any(re.search(r"\d[kMG]?B\b", f) for f in frames), frames  # MiB, not tqdm's MB and kB/s


def test_ctrl_c_adds_no_progress_line():
    stream, store = io.StringIO(), FakeStore()
    progress = Progress(store, "r", True, stream=stream)
    store.run = {"bytes_planned": 100 * MIB, "bytes_read": 0, "units_total": 4}
    progress.poll()
    store.run.update(bytes_read=60 * MIB)
    progress.close(interrupted=True)
    progress.close()  # the finally after the interruption: nothing more
    assert len(stream.getvalue().splitlines()) == 1


def test_disabled_progress_writes_nothing():
    stream, store = io.StringIO(), FakeStore()
    _drive(Progress(store, "r", False, stream=stream), store)
    assert stream.getvalue() == ""


def test_the_demo_says_it_is_building_the_sample(monkeypatch, capsys, tmp_path):
    """No silent seconds: a line before the sample database is built, one when it is ready."""
    import contextlib

    seen: list[str] = []

    @contextlib.contextmanager
    def fake_demo(size_mb, profile):
        seen.append(capsys.readouterr().err)
        yield "spec", "emulation"

    monkeypatch.setattr(runner, "demo_database", fake_demo)
    monkeypatch.setattr(runner, "_execute", lambda spec, options, emulation: {"ok": True})
    monkeypatch.chdir(tmp_path)  # the run holds its evidence folder, ./out/r1, from its start
    assert runner.run_local(runner.LocalOptions(size_mb=42, emulate=False, run_id="r1")) == {"ok": True}
    assert "cutover-prep: building the 42 MB sample database" in seen[0]
    assert "sample database ready in" in capsys.readouterr().err


def _read_pty(master: int, *, until: str, timeout_s: float = 10.0) -> str:
    """What the pty's other end received: the kernel hands a slave's writes to the master side
    asynchronously, so one read right after the writes may see only part of them (seen in CI)."""
    import os
    import select
    import time

    data, deadline = b"", time.monotonic() + timeout_s
    while until.encode() not in data and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            data += os.read(master, 65536)
    return data.decode()


def test_a_terminal_without_width_gets_plain_lines():
    """A pty nobody sized (0 columns) got no tqdm bar at all, so no progress: plain lines instead."""
    import os
    import pty

    master, slave = pty.openpty()  # 0 x 0 until someone sets its size
    try:
        with os.fdopen(slave, "w", closefd=False) as stream:
            store = FakeStore()
            _drive(Progress(store, "r", True, stream=stream), store)
        text = _read_pty(master, until="benchmark: 3/5 points")
    finally:
        os.close(master)
        os.close(slave)
    assert "cutover-prep: benchmark: 3/5 points" in text and "\r" not in text.replace("\r\n", "\n")


def test_the_warm_up_rate_counts_from_the_first_bytes_read_not_from_the_cold_probe(monkeypatch):
    """The demo printed 5.1 MiB/s for a warm-up that ran at 15.4: the seconds of discovery and the cold
    probe before the first unit counted as warm-up time."""
    clock = [1000.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    store = FakeStore()
    progress = Progress(store, "r", True, stream=io.StringIO())
    run = {"bytes_planned": 100 * MIB, "bytes_read": 0, "units_total": 4, "units_done": 0, "units_failed": 0}
    assert "MiB/s" not in progress._warm_text(run_item("r", run))  # nothing read yet: no rate
    clock[0] += 60  # discovery and the cold probe
    # the first bytes: the clock starts
    assert "MiB/s" not in progress._warm_text(run_item("r", {**run, "bytes_read": 10 * MIB}))
    clock[0] += 6
    assert progress._warm_text(run_item("r", {**run, "bytes_read": 100 * MIB})).endswith(
        "0 failed, 15.0 MiB/s so far")


def test_piped_output_says_where_the_warm_up_ended_before_the_benchmark():
    """Issue 23 §5: piped, `local --dsn` printed "warm-up: 0.0 of 92.0 MiB (0 %)" and went on to the
    benchmark; no line said the warm-up was over."""
    stream, store = io.StringIO(), FakeStore()
    _drive(Progress(store, "r", True, stream=stream), store)
    lines = stream.getvalue().splitlines()
    ended = "cutover-prep: warm-up ended: 100.0 of 100.0 MiB (100 %), 4/4 units, 0 failed"
    assert any(line.startswith(ended) for line in lines), lines
    first_benchmark = next(i for i, line in enumerate(lines) if "benchmark:" in line)
    assert lines[first_benchmark - 1].startswith(ended)


def test_piped_output_of_a_run_without_benchmark_ends_with_the_warm_up_line():
    stream, store = io.StringIO(), FakeStore()
    progress = Progress(store, "r", True, stream=stream)
    store.run = {"bytes_planned": 100 * MIB, "bytes_read": 0, "units_total": 4, "units_done": 0, "units_failed": 0}
    progress.poll()
    store.run.update(bytes_read=60 * MIB, units_done=3, units_failed=1)
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("cutover-prep: warm-up ended: 60.0 of 100.0 MiB (60 %), 3/4 units, 1 failed"), lines
    assert len(lines) == 2


def test_the_warm_up_line_gives_an_eta_at_the_measured_rate(monkeypatch):
    """Issue 23 §2: the ETA comes from the rate measured since the first bytes, not the assumed one.
    Worked out by hand: 10 MiB at t=0, 30 MiB at t=10 s -> 2 MiB/s over the window, 70 MiB left -> 35 s."""
    now = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: now[0])
    stream, store = io.StringIO(), FakeStore()
    progress = Progress(store, "r", True, stream=stream)
    monkeypatch.setattr(Progress, "NON_TTY_INTERVAL_S", 0.0)
    store.run = {"bytes_planned": 100 * MIB, "bytes_read": 10 * MIB, "units_total": 4, "units_done": 0,
                 "units_failed": 0}
    progress.poll()
    now[0] = 110.0
    store.run.update(bytes_read=30 * MIB, units_done=1)
    progress.poll()
    assert stream.getvalue().splitlines()[-1].endswith(", 2.0 MiB/s so far, done in ~35 s (ETA at the measured rate)")


def test_clock_format():
    from cutover_prep.findings.eta import clock_text

    assert [clock_text(s) for s in (42.4, 187, 3723)] == ["42 s", "3:07", "1:02:03"]


class StoreWithUnits(FakeStore):
    def __init__(self, items: list[dict]) -> None:
        super().__init__()
        self.items = items

    def units(self, run_id: str):
        return iter([UnitProgress.read(i) for i in self.items])

    def exists(self, key: str) -> bool:
        return False


def test_the_warm_up_ended_line_gives_the_findings_time_and_rate():
    """Issue 23 §5: the bar ended at '01:06 … 9.9 MiB/s' while the report said '20.6 s at 15.6 MiB/s'. The end
    line now says the findings' figures: first unit start to last unit end (by hand: 00:00:01.5 to 00:00:22.1,
    20.6 s) and the bytes read over it (321.36 MiB / 20.6 s = 15.6 MiB/s)."""
    nbytes = int(321.36 * MIB)
    items = [{"sk": "UNIT#a", "started_at": "2026-11-25T00:00:01.500000+00:00",
              "finished_at": "2026-11-25T00:00:15.000000+00:00", "bytes_read": nbytes // 2},
             {"sk": "UNIT#b", "started_at": "2026-11-25T00:00:03.000000+00:00",
              "finished_at": "2026-11-25T00:00:22.100000+00:00", "bytes_read": nbytes - nbytes // 2}]
    stream, store = io.StringIO(), StoreWithUnits(items)
    progress = Progress(store, "r", True, stream=stream)
    store.run = {"bytes_planned": nbytes, "bytes_read": nbytes, "units_total": 2, "units_done": 2, "units_failed": 0}
    progress.close()
    assert stream.getvalue().splitlines()[-1] == ("cutover-prep: warm-up ended: 321.4 of 321.4 MiB (100 %), 2/2 units, "
                                                  "0 failed, in 20.6 s at 15.6 MiB/s")


def test_the_live_eta_is_the_findings_estimator_fed_from_the_unit_items(monkeypatch):
    """Issue 23 §2: `local`'s live ETA and the findings' replay are one estimator (findings.eta.WorkEta): the units'
    work priced by the estimate's model and corrected by the units finished so far. Fed here by hand with what the
    unit items say at each poll (bytes read since the last one; a unit's finish with its span), it gives the same
    seconds the line shows."""
    from cutover_prep.dal.records.plan import PlanUnit
    from cutover_prep.findings.eta import CostModel, TimeModel, WorkEta, clock_text

    now = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(Progress, "NON_TTY_INTERVAL_S", 0.0)
    units = [{"unit_id": "a", "bytes": 10 * MIB, "ranges": [{}]}, {"unit_id": "b", "bytes": 10 * MIB, "ranges": [{}]},
             {"unit_id": "c", "bytes": MIB, "ranges": [{}] * 20}]
    estimate = {"assumed_mib_per_s": 10.0, "range_seconds": 0.5, "concurrency": 1}

    class UnitStore(FakeStore):
        items: list[dict] = []

        def exists(self, key: str) -> bool:
            return key.endswith("units.json")

        def get_json(self, key: str):
            return units

        def units(self, run_id: str):
            return iter([UnitProgress.read(i) for i in self.items])

    stream, store = io.StringIO(), UnitStore()
    progress = Progress(store, "r", True, stream=stream)
    base = {"bytes_planned": 21 * MIB, "units_total": 3, "units_failed": 0, "estimate": estimate}
    store.run = {**base, "bytes_read": 4 * MIB, "units_done": 0}
    store.items = [{"sk": "UNIT#a", "bytes_read": 4 * MIB, "status": "RUNNING"}]
    progress.poll()
    now[0] = 112.0
    store.run = {**base, "bytes_read": 15 * MIB, "units_done": 1}
    store.items = [{"sk": "UNIT#a", "bytes_read": 10 * MIB, "status": "DONE",
                    "chunks": [["2026-11-25T01:00:04", 4 * MIB, 4.0], ["2026-11-25T01:00:12", 6 * MIB, 6.0]],
                    "finished_at": "2026-11-25T01:00:12"},
                   {"sk": "UNIT#b", "bytes_read": 5 * MIB, "status": "RUNNING"}]
    progress.poll()
    expected = WorkEta([PlanUnit.model_validate(u).summary() for u in units],
                       CostModel.of(TimeModel.model_validate(estimate)))
    expected.progress(0.0, "a", 4 * MIB)
    expected.progress(12.0, "a", 6 * MIB)
    expected.finished("a", 12.0)  # its first chunk began at 01:00:00, it finished at 01:00:12
    expected.progress(12.0, "b", 5 * MIB)
    left = expected.eta()
    assert left is not None and left > 0
    assert stream.getvalue().splitlines()[-1].endswith(f"done in ~{clock_text(left)} (ETA at the measured rate)")


class WholeItemRefused(FakeStore):
    """A store that has the projected read: Progress must not read the whole run item."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, ...]] = []

    def get_run(self, run_id: str) -> RunItem | None:
        raise AssertionError("the progress poll read the whole run item")

    def get_run_fields(self, run_id: str, fields: tuple[str, ...]) -> RunItem | None:
        self.asked.append(fields)
        return run_item(run_id, {k: v for k, v in self.run.items() if k in fields})


def test_the_poll_reads_only_the_run_items_fields_it_shows():
    """Issue 24 §5: polled every second, the whole run item (plan summary, estimate, hot-set ids) serialized by
    moto in the local run's interpreter was most of its CPU on a busy machine (py-spy: 77 % of samples in
    Progress.poll -> Store.get_run), which the handlers and the probes' reads waited for."""
    stream, store = io.StringIO(), WholeItemRefused()
    _drive(Progress(store, "r", True, stream=stream), store)
    assert store.asked and set(store.asked) <= {Progress.RUN_FIELDS, (*Progress.RUN_FIELDS, "estimate")}
    assert "cutover-prep: benchmark: 3/5 points" in stream.getvalue().splitlines()


def test_store_reads_only_the_fields_asked_for(store):
    store._ddb.put_item(TableName=store.table, Item={
        "pk": {"S": "RUN#r"}, "sk": {"S": "RUN"}, "bytes_read": {"N": "5"}, "bytes_planned": {"N": "9"},
        "plan": {"S": "x" * 1000}})
    run = store.get_run_fields("r", ("bytes_read", "bytes_planned", "benchmark_points"))
    assert run.stored() == {"run_id": "r", "schema_version": 1, "bytes_read": 5, "bytes_planned": 9}  # not the plan


def test_every_step_starts_with_a_line_and_the_warm_up_waits_for_its_first_unit(monkeypatch):
    """Issue 33 §4: 40 s of silence after "warm-up: 0.0 of 335.9 MiB (0 %)" while the cold probe ran. Each step
    the harness starts is said as it starts (the cold probe before any warm-up line); the warm-up's rate counts
    from its first unit's start, the start the 'warm-up ended' line and the findings count from (by hand: 30 MiB
    in the 10 s since the first unit started is 3.0 MiB/s)."""
    now = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: now[0])
    stream, store, steps = io.StringIO(), FakeStore(), []
    progress = Progress(store, "r", True, stream=stream, steps=lambda: list(steps))
    monkeypatch.setattr(Progress, "NON_TTY_INTERVAL_S", 0.0)
    steps += [("handlers.validate_input", None, 100.0), ("handlers.discover", None, 100.0)]
    progress.poll()
    store.run = {"bytes_planned": 100 * MIB, "bytes_read": 0, "units_total": 4, "units_done": 0, "units_failed": 0}
    steps.append(("handlers.probe", "cold", 101.0))
    progress.poll()
    lines = stream.getvalue().splitlines()
    assert lines == ["cutover-prep: discover: listing the databases, relations and sizes to read ...",
                     "cutover-prep: cold probe: timing single-block reads of a random sample before anything is "
                     "warmed (the first-touch penalty) ..."]
    now[0] = 140.0
    steps.append(("handlers.warm_slot", None, 140.0))
    progress.poll()
    assert stream.getvalue().splitlines()[-1].startswith("cutover-prep: warm-up: 0.0 of 100.0 MiB (0 %)")
    now[0] = 150.0
    store.run.update(bytes_read=30 * MIB, units_done=1)
    progress.poll()
    assert ", 3.0 MiB/s so far" in stream.getvalue().splitlines()[-1]
    steps += [("handlers.end_census", None, 160.0), ("handlers.probe", "warm", 161.0)]
    store.run.update(bytes_read=100 * MIB, units_done=4)
    progress.poll()
    said = stream.getvalue().splitlines()
    assert said[-3].startswith("cutover-prep: warm-up ended: 100.0 of 100.0 MiB (100 %)")  # before the next step
    assert said[-2:] == ["cutover-prep: end census: what is on the volume now, against what was read ...",
                         "cutover-prep: warm probe: timing a fresh random sample, after the warm-up ..."]


def test_the_benchmarks_last_count_comes_before_the_steps_after_it(monkeypatch):
    """The demo printed "findings: ..." and then "benchmark: 5/5 points": the points' last count now ends the
    benchmark before the next step's line, and nothing is said of the benchmark after it."""
    stream, store, steps = io.StringIO(), FakeStore(), []
    progress = Progress(store, "r", True, stream=stream, steps=lambda: list(steps))
    steps += [("handlers.warm_slot", None, 1.0)]
    store.run = {"bytes_planned": 100 * MIB, "bytes_read": 100 * MIB, "units_total": 4, "units_done": 4,
                 "units_failed": 0, "benchmark_points": 2}
    progress.poll()
    store.done_points = [{"point_id": "seq-8", "status": "DONE"}, {"point_id": "rnd-1", "status": "DONE"}]
    steps += [("handlers.analyze", None, 2.0), ("handlers.finalize", None, 3.0)]
    progress.poll()
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines[-3:] == ["cutover-prep: benchmark: 2/2 points", "cutover-prep: analysing the benchmark's points ...",
                          "cutover-prep: findings: coverage, verdict, summary.md and report.html ..."], lines
