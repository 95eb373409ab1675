"""A fake of ``time.monotonic`` and ``time.sleep`` for the emulated volume's tests (``volume.clock``, the FUSE
serving path): every sleep ends ``overshoot`` seconds late, as on a busy machine."""

from __future__ import annotations


class FakeClock:
    def __init__(self, overshoot: float = 0.0, start: float = 0.0) -> None:
        self.now, self.overshoot = start, overshoot
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds + self.overshoot
