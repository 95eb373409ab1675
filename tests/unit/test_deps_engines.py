"""``deps.cached_engine``: one engine per Lambda container (thread) and target, reused across invocations.

Locally (moto's Step Functions interpreter, the local harness) each invocation may run in a thread of its
own; an engine kept for a thread that has ended held its connections open for the life of the process.
Seen in CI: a comparison's child runs left 79 connections to the test server open and a later test failed
with PostgreSQL's "sorry, too many clients already". An engine whose thread has ended is closed and
forgotten the next time an engine is taken."""

from __future__ import annotations

import threading

import pytest

from cutover_prep import deps
from cutover_prep.engines import ConnectionSpec
from tests.unit.contexts import context


class FakeEngine:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[FakeEngine]:
    made: list[FakeEngine] = []
    spec = ConnectionSpec(engine="postgres", host="db.example", port=5432, database="app", user="u", password="p")
    monkeypatch.setattr(deps, "connection_spec", lambda run, *a, **k: spec)
    monkeypatch.setattr(deps, "open_engine", lambda s, w, **k: made.append(FakeEngine()) or made[-1])
    monkeypatch.setattr(deps, "_engines", {})
    return made


def test_an_engine_of_an_ended_thread_is_closed_when_the_next_is_taken(opened: list[FakeEngine]) -> None:
    run = context()
    for _ in range(5):  # five invocations, each in a thread of its own that then ends
        t = threading.Thread(target=deps.cached_engine, args=(run, 60.0))
        t.start()
        t.join()
    mine = deps.cached_engine(run, 60.0)
    assert len(opened) == 6 and opened[-1] is mine
    assert [e.closed for e in opened] == [True] * 5 + [False]  # only the living thread's engine stays open
    assert deps.cached_engine(run, 60.0) is mine  # and is reused


def test_reset_closes_every_cached_engine(opened: list[FakeEngine]) -> None:
    run = context()
    deps.cached_engine(run, 60.0)
    t = threading.Thread(target=deps.cached_engine, args=(run, 60.0))
    t.start()
    t.join()
    deps.reset()
    assert len(opened) == 2 and all(e.closed for e in opened)
    assert deps.cached_engine(run, 60.0) is opened[-1] and len(opened) == 3  # a new one after the reset
