"""The drop rule every engine's scratch cleanup follows (benchmark/scratch.refuse_drop)."""

from cutover_prep.benchmark.scratch import scratch_for_run
from cutover_prep.engines.scratch import Dropped, refuse_drop

SCRATCH = scratch_for_run("run-1", "postgres", 2**20)


def test_nothing_of_that_name_is_absent() -> None:
    assert refuse_drop(False, None, SCRATCH) is Dropped.ABSENT


def test_an_object_without_this_runs_marker_is_never_ours() -> None:
    assert refuse_drop(True, None, SCRATCH) is Dropped.NOT_OURS  # no comment at all: the customer's
    assert refuse_drop(True, "", SCRATCH) is Dropped.NOT_OURS
    other = scratch_for_run("run-2", "postgres", 2**20)
    assert refuse_drop(True, other.marker, SCRATCH) is Dropped.NOT_OURS  # another run's object
    assert refuse_drop(True, SCRATCH.marker + " ", SCRATCH) is Dropped.NOT_OURS  # exact marker only


def test_this_runs_object_may_be_dropped() -> None:
    assert refuse_drop(True, SCRATCH.marker, SCRATCH) is None
