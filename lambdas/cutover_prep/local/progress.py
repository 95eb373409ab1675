"""``cutover-prep local``'s progress on stderr: one line as each step of the run starts, then the warm-up's and
the benchmark's own bar (a terminal) or lines (a pipe, a CI log), fed from the run item's counters in DynamoDB and
the harness's record of the steps it has started (``LocalAws.steps``)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

from cutover_prep.dal.records.plan import PlanUnit
from cutover_prep.dal.records.run import RunItem
from cutover_prep.dal.store import Store, evidence_key
from cutover_prep.escape import for_terminal
from cutover_prep.findings.eta import CostModel, TimeModel, WorkEta, clock_text, eta_seconds, unit_span
from cutover_prep.findings.timeline import warmup_wall
from cutover_prep.report import clocks
from cutover_prep.report.charts import fmt_duration, fmt_number


def _columns(stream: Any) -> int:
    """The terminal's width; 80 when the stream cannot say (not a file descriptor)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 80


# The line each step of the run begins with (``LocalAws.steps``: handler module, probe phase). The warm-up and the
# benchmark have their own first line (their bar, or their first progress line): none here.
STEP_LINES: dict[tuple[str, str | None], str] = {
    ("handlers.discover", None): "discover: listing the databases, relations and sizes to read ...",
    ("handlers.preflight", None): "preflight: checking the grants and settings the run needs ...",
    ("handlers.probe", "cold"): "cold probe: timing single-block reads of a random sample before anything is warmed "
                                "(the first-touch penalty) ...",
    ("handlers.end_census", None): "end census: what is on the volume now, against what was read ...",
    ("handlers.probe", "warm"): "warm probe: timing a fresh random sample, after the warm-up ...",
    ("handlers.analyze", None): "analysing the benchmark's points ...",
    ("handlers.finalize", None): "findings: coverage, verdict, summary.md and report.html ...",
}
WARM_STEPS = ("handlers.warm_slot", "handlers.warm_unit", "handlers.unit_failed")  # the warm-up's own steps
WARM_OVER = "warm-up over"  # Progress._phase once a step after the warm-up began
BENCH_OVER = "benchmark over"  # and once a step after the sweep's points began
AFTER_POINTS = ("handlers.collect_metrics", "handlers.analyze", "handlers.benchmark_failed",
                "handlers.cleanup_scratch", "handlers.finalize")


class Progress:
    """Progress fed from the run item's counters in DynamoDB.

    On a terminal, a bar: the warm-up's bytes (MiB, MiB/s, units), then, once the benchmark is
    planned, a bar of its own (points done/total), so a finished warm-up's rate does not fall
    while the points run. Anywhere else (a pipe, a CI log) plain lines, never ``\\r``-joined
    frames: one when a phase starts, one every ``NON_TTY_INTERVAL_S`` and one at the end.
    """

    NON_TTY_INTERVAL_S = 10.0
    # what the bar and the lines read from the run item, polled every second: the whole item, serialized by
    # moto in this interpreter, cost most of its CPU on a busy machine (py-spy, issue 24 §5), which the
    # handlers and the probes' reads then waited for; the estimate (large) only until the ETA is made from it
    RUN_FIELDS = ("bytes_planned", "bytes_read", "benchmark_points", "units_done", "units_total", "units_failed",
                  "selection")

    def __init__(self, store: Store, run_id: str, enabled: bool, stream: Any = None,
                 time_scale: float | None = None,
                 steps: Callable[[], list[tuple[str, str | None, float]]] | None = None) -> None:
        self.store, self.run_id, self.enabled = store, run_id, enabled
        self.time_scale = time_scale  # an emulated volume's (report.clocks): its clock beside the wall clock
        self.stream = stream if stream is not None else sys.stderr
        self.bar: Any = None
        # a terminal with no width (a pty nobody sized: `script` in some CI, `docker run -t`) gets no
        # bar from tqdm at all: plain lines there too
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)()) and _columns(self.stream) > 0
        self._phase: str | None = None
        self._phase_started = 0.0
        self._reading_since: tuple[float, float] | None = None  # (time, MiB) when bytes were first seen
        self._eta_samples: list[tuple[float, float]] = []  # (s since then, MiB done) until the plan is known
        self._work_eta: WorkEta | None = None  # then findings.eta's estimator, fed from the unit items
        self._unit_bytes: dict[str, int] = {}  # bytes read per unit, as last polled
        self._units_seen: tuple[int | None, ...] | None = None  # the run item's counters when the unit items were read
        self._last_done, self._last_change = -1.0, 0.0  # MiB read at the last change, and when
        self._printed = 0.0
        self._said_selection = False
        self._last_line = ""
        self._steps = steps  # the harness's record of the steps started (None: the counters only)
        self._steps_said = 0
        self._warm_started: float | None = None  # when the first warm-up unit started (monotonic)

    def poll(self, *, final: bool = False) -> None:
        if not self.enabled:  # --no-progress: quiet, the selection line too (it is in the run's evidence)
            return
        fields = getattr(self.store, "get_run_fields", None)  # the tests' fake stores have get_run only
        wanted = self.RUN_FIELDS + (("estimate",) if self._work_eta is None else ())  # read until the ETA has it
        run = fields(self.run_id, wanted) if fields else self.store.get_run(self.run_id)
        self._say_steps(run)
        if run is None or run.bytes_planned is None:
            return
        self._say_selection(run)
        if self._phase == BENCH_OVER:
            return  # the points are done: the steps after them say what runs
        if not run.benchmark_points and (self._phase == WARM_OVER or (
                self._steps is not None and self._warm_started is None)):
            return  # the warm-up not begun (the cold probe runs first), or over: their step lines say what runs
        phase = "benchmark" if run.benchmark_points else "warm-up"
        started = phase != self._phase
        if started:
            self._start_phase(phase, run)
        if phase == "benchmark":
            n, total = self._points_done(), run.benchmark_points or 0
        else:
            n, total = run.bytes_read or 0, run.bytes_planned
        if self._tty:
            self._draw(n, total, self._warm_text(run) if phase == "warm-up" else "")
        elif final and phase == "warm-up":
            self._end_line(run)
        elif started or final or time.monotonic() - self._printed >= self.NON_TTY_INTERVAL_S:
            self._line(phase, n, total, run)

    def _say_steps(self, run: RunItem | None) -> None:
        """A line for each step begun since the last poll: no step of the run passes in silence. A step after
        the warm-up ends its bar or lines first, with the warm-up's time and rate."""
        if self._steps is None:
            return
        steps = list(self._steps())
        for module, phase, at in steps[self._steps_said:]:
            if module in WARM_STEPS and self._warm_started is None:
                self._warm_started = at
            if module not in WARM_STEPS and self._phase == "warm-up" and run is not None \
                    and run.bytes_planned is not None:
                self._end_warmup(run)
            if module in AFTER_POINTS and self._phase == "benchmark":
                self._end_benchmark(run)
            line = STEP_LINES.get((module, phase))
            if line:
                self._say(line)
        self._steps_said = len(steps)

    def _say(self, line: str) -> None:
        text = f"cutover-prep: {line}"
        if self.bar is not None:  # above the bar, which tqdm draws again under it
            from tqdm import tqdm

            tqdm.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def _say_selection(self, run: RunItem) -> None:
        """Once, before the warm-up reads: what it reads and what the selection leaves out (Discover's line)."""
        if not self._said_selection and run.selection:
            self._said_selection = True
            print(f"cutover-prep: {for_terminal(run.selection)}", file=self.stream, flush=True)

    def _warm_text(self, run: RunItem, *, percent: bool = False, eta: bool = True, rate: bool = True) -> str:
        """``13.8 of 34.4 MiB (40 %), 30/71 units, 0 failed, 1.3 MiB/s``: MiB, as the report counts
        (tqdm's own scale would say MB and kB/s); the rate is the mean since the first bytes were read
        (the cold probe and discovery before them are not the warm-up's time)."""
        done, total = (run.bytes_read or 0) / 2**20, (run.bytes_planned or 0) / 2**20
        if done and self._reading_since is None:
            # from the first unit's start when the harness says it (the rate is then the one the 'warm-up ended'
            # line and the findings give, findings.timeline.warmup_wall, so far); else from the first bytes seen
            self._reading_since = (self._warm_started, 0.0) if self._warm_started is not None else (
                time.monotonic(), done)
        since, base = self._reading_since or (time.monotonic(), done)
        seconds = time.monotonic() - since
        if done != self._last_done:  # the rate runs until the last bytes, not on past the warm-up's end
            self._last_done, self._last_change = done, time.monotonic()
        reading = (self._last_change or time.monotonic()) - since
        speed = f", {(done - base) / reading:,.1f} MiB/s so far" if rate and reading >= 1 else ""
        if self._reading_since is not None:
            self._sample(run, seconds, done)
        left = self._left(run) if eta and seconds >= 1 and done < total else None
        pct = f" ({100 * done / total:.0f} %)" if percent and total else ""
        return (f"{done:,.1f} of {total:,.1f} MiB{pct}, {run.units_done or 0}/{run.units_total or 0} "
                f"units, {run.units_failed or 0} failed{speed}"
                + (f", done in ~{clock_text(left)} (ETA at the measured rate)" if left is not None else ""))

    def _sample(self, run: RunItem, seconds: float, done_mib: float) -> None:
        """What ``findings.eta``'s estimator goes on (``WorkEta``: each unit's bytes, ranges and itself, priced by
        the estimate's time model corrected by the units finished so far) once the plan and the estimate are
        recorded, fed from the unit items; MiB until then (and for a store without units: the tests' fakes)."""
        if self._work_eta is None and run.estimate and hasattr(self.store, "units"):
            units_key = evidence_key(self.run_id, "units.json")
            model = CostModel.of(TimeModel.model_validate(run.estimate, from_attributes=True))
            if model is not None and self.store.exists(units_key):
                self._work_eta = WorkEta([PlanUnit.model_validate(u).summary() for u in self.store.get_json(units_key)],
                                         model)
        if self._work_eta is None:
            if not self._eta_samples or seconds > self._eta_samples[-1][0]:
                self._eta_samples.append((seconds, done_mib))
            return
        # the unit items only change when the run item's counters do: read them (every unit, serialized by moto
        # in this interpreter) only then, not at every poll
        counters = (run.bytes_read, run.units_done, run.units_failed)
        if counters == self._units_seen:
            self._work_eta.at(seconds)
            return
        self._units_seen = counters
        for item in self.store.units(self.run_id):
            uid, nbytes = item.unit_id, item.bytes_read
            if nbytes > self._unit_bytes.get(uid, 0):
                self._work_eta.progress(seconds, uid, nbytes - self._unit_bytes.get(uid, 0))
                self._unit_bytes[uid] = nbytes
            self._work_eta.finished(uid, unit_span(item))
        self._work_eta.at(seconds)

    def _left(self, run: RunItem) -> float | None:
        """Seconds left at the measured rate (``findings.eta``)."""
        if self._work_eta is not None:
            return self._work_eta.eta()
        return eta_seconds(self._eta_samples, (run.bytes_planned or 0) / 2**20)

    def _points_done(self) -> int:
        return sum(1 for p in self.store.points(self.run_id)
                   if p.status in ("DONE", "FAILED") and not p.point_id.startswith("probe-"))

    def _end_benchmark(self, run: RunItem) -> None:
        """The points are over: their last count (bar or line) before the next step's line."""
        n, total = self._points_done(), run.benchmark_points or 0
        if self.bar is not None:
            self._draw(n, total, "")
            self.bar.close()
            self.bar = None
        elif not self._tty:
            self._line("benchmark", n, total, run)
        self._phase = BENCH_OVER

    def _end_warmup(self, run: RunItem) -> None:
        """The warm-up is over: a log says where it ended, not only its bar; its bar ends at what it read, at the
        warm-up's one rate (the findings')."""
        if not self._tty:
            self._end_line(run)
        if self.bar is not None:
            self.bar.n = min(run.bytes_read or 0, self.bar.total or 0)
            self.bar.set_postfix_str(self._ended_text(run), refresh=False)
            self.bar.close()
            self.bar = None
        self._phase = WARM_OVER

    def _start_phase(self, phase: str, run: RunItem) -> None:
        if self._phase == "warm-up":
            self._end_warmup(run)
        self._phase, self._phase_started = phase, time.monotonic()
        if self._tty:
            from tqdm import tqdm

            if phase == "benchmark":
                self.bar = tqdm(total=run.benchmark_points or 0, desc="benchmark", file=self.stream,
                                dynamic_ncols=True,
                                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} points [{elapsed}]")
            else:
                self.bar = tqdm(total=run.bytes_planned or 0, desc="warm-up", file=self.stream,
                                dynamic_ncols=True,  # tqdm puts ", " before the postfix
                                bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}{postfix}]")

    def _draw(self, n: int, total: int, postfix: str) -> None:
        self.bar.total = total
        self.bar.n = min(n, total)
        if postfix:
            self.bar.set_postfix_str(postfix, refresh=False)
        self.bar.refresh()

    def _line(self, phase: str, n: int, total: int, run: RunItem) -> None:
        line = (f"benchmark: {n}/{total} points" if phase == "benchmark"
                else f"warm-up: {self._warm_text(run, percent=True)}")
        self._printed = time.monotonic()
        if line != self._last_line:
            print(f"cutover-prep: {line}", file=self.stream, flush=True)
            self._last_line = line

    def _end_line(self, run: RunItem) -> None:
        """The warm-up's last line, with its time and rate as the findings, summary.md and the report define
        them (``findings.timeline.warmup_wall``: the first unit's start to the last one's finish)."""
        line = f"warm-up ended: {self._ended_text(run)}"
        print(f"cutover-prep: {line}", file=self.stream, flush=True)
        self._last_line = line

    def _ended_text(self, run: RunItem) -> str:
        text = self._warm_text(run, percent=True, eta=False, rate=False)
        if hasattr(self.store, "units"):
            wall, nbytes = warmup_wall(list(self.store.units(self.run_id)))
            if wall:
                rate = round(nbytes / wall / 2**20, 3)
                text += f", in {fmt_duration(wall)} at {fmt_number(rate)} MiB/s"
                text += clocks.warmup_text(wall, rate, self.time_scale)
        return text

    def close(self, *, interrupted: bool = False) -> None:
        """The last frame or line (none on Ctrl-C: the interruption is the one line then); piped, a run that
        ends in its warm-up (no benchmark) says where the warm-up ended."""
        if not self.enabled:
            return
        if not interrupted:
            self.poll(final=True)
        self.enabled = False
        if self.bar is not None:
            self.bar.close()
            self.bar = None
