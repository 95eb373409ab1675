"""A probe's latency is the database server's time for each read when the reader can time it there
(issue 24 §5): what the client's clock adds (a client process starved of CPU, the local harness's Python
shared with moto) must not narrow cold/warm. The expected figures are the fake server's own timings, set
by the test; the client's clock runs on a fake that adds the same starvation to every read."""

from __future__ import annotations

import time

import pytest

from cutover_prep.analysis.probes import warm_vs_cold
from cutover_prep.measure import runner
from cutover_prep.models.thresholds import Thresholds

BLOCK = {"segment": "s", "locator": {"oid": 1}, "file_id": 1, "block": 7, "block_size": 8192}
STARVED_S = 0.030  # what the client's process adds to every read, cold or warm


class StarvedClient:
    """``time.perf_counter`` and ``time.monotonic`` of a client whose every read takes the server's time plus
    ``STARVED_S`` (the reader advances it)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Driver:
    engine = "fake"

    def __init__(self, clock: StarvedClient, server_s: list[float | None]) -> None:
        self.clock, self.server_s = clock, list(server_s)

    def counters(self):
        return {}

    def latency_histogram(self):
        return None

    def random_reader(self):
        driver = self

        class Reader:
            def read_block(self, locator, file_id, block):
                took = driver.server_s.pop(0)
                driver.clock.now += (took or 0.0) + STARVED_S
                return took

            def close(self):
                pass

        return Reader()


@pytest.fixture
def clock(monkeypatch):
    fake = StarvedClient()
    monkeypatch.setattr(time, "perf_counter", fake)
    monkeypatch.setattr(time, "monotonic", fake)
    return fake


def probe(clock, server_s):
    return runner.run_probe(Driver(clock, server_s), [BLOCK] * len(server_s), phase="cold", max_seconds=60)


def test_the_probe_reports_the_servers_timings_and_keeps_the_clients_beside(clock):
    result = probe(clock, [0.062, 0.060, 0.064])
    assert result["timed_by"] == "server"
    assert result["latency_us"]["p50"] == pytest.approx(62_000)
    assert result["latency_us"]["max"] == pytest.approx(64_000)
    assert sum(result["latency_hist_us"].values()) == 3
    assert result["client_latency_us"]["p50"] == pytest.approx(62_000 + STARVED_S * 1e6)


def test_a_starved_client_does_not_narrow_cold_over_warm(clock):
    """The profile's 62 ms cold and 18.4 ms warm (5.4 + 2.3 ms and 2.3 ms emulated, x8) are 3.37x on the
    server's clock; the client's 30 ms more on each read would make them 1.89x and fail WARM_VS_COLD."""
    cold, warm = probe(clock, [0.062] * 5), probe(clock, [0.0184] * 5)
    c, w = cold["latency_us"]["p50"] / 1000, warm["latency_us"]["p50"] / 1000
    assert c / w == pytest.approx(62 / 18.4)
    assert warm_vs_cold(c, w, Thresholds(), overlap=0).ok is True
    cc, cw = cold["client_latency_us"]["p50"] / 1000, warm["client_latency_us"]["p50"] / 1000
    assert warm_vs_cold(cc, cw, Thresholds(), overlap=0).ok is False  # what the client's clock said


def test_a_reader_that_cannot_time_in_the_server_is_timed_by_the_client(clock):
    result = probe(clock, [None, None])
    assert result["timed_by"] == "client" and "client_latency_us" not in result
    assert result["latency_us"]["p50"] == pytest.approx(STARVED_S * 1e6)
    mixed = probe(clock, [0.01, None])  # one read the server did not time: the client's clock for all
    assert mixed["timed_by"] == "client"
