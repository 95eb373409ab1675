"""The hydration state: restore makes the snapshot's chunks cold, the namespace is followed, and
the state file round-trips (no FUSE needed)."""

from __future__ import annotations

import pytest

from cutover_prep.local.volume.state import HydrationState, summary_of_file

CHUNK = 512 * 1024


@pytest.fixture
def backing(tmp_path):
    (tmp_path / "base" / "1").mkdir(parents=True)
    (tmp_path / "base" / "1" / "16384").write_bytes(b"x" * (3 * CHUNK + 1))  # 4 chunks
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "link").symlink_to("empty")
    return tmp_path


def test_restore_makes_every_snapshot_chunk_cold(backing):
    state = HydrationState.restored(backing, CHUNK)
    assert state.summary() == {"files": 2, "chunks_total": 4, "chunks_hydrated": 0, "hydrated_pct": 0.0}
    assert state.cold_chunks("/base/1/16384", CHUNK - 10, 20) == [0, 1]
    assert state.cold_chunks("/base/1/16384", 10 * CHUNK, 8192) == []  # beyond the snapshot: warm
    assert state.cold_chunks("/unknown", 0, 8192) == []  # created after the restore: warm
    assert state.mark("/base/1/16384", 1) and not state.mark("/base/1/16384", 1)
    assert state.summary("/base")["hydrated_pct"] == 25.0
    assert state.summary("/nothing")["hydrated_pct"] is None


def test_truncate_rename_and_drop_follow_the_namespace(backing):
    state = HydrationState.restored(backing, CHUNK)
    state.mark("/base/1/16384", 0)
    state.rename("/base", "/moved")  # a directory: everything under it moves
    assert state.summary("/moved")["chunks_hydrated"] == 1 and state.summary("/base")["files"] == 0
    state.truncate("/moved/1/16384", CHUNK + 1)
    assert state.summary("/moved")["chunks_total"] == 2
    state.drop("/moved/1/16384")
    assert state.summary()["chunks_total"] == 0


def test_the_state_file_round_trips_and_rejects_another_chunk_size(backing, tmp_path):
    state = HydrationState.restored(backing, CHUNK)
    state.mark("/base/1/16384", 3)
    path = tmp_path / "state.json"
    state.save(path)
    assert not state.dirty
    loaded = HydrationState.load(path, CHUNK)
    assert loaded.summary() == state.summary()
    assert loaded.is_hot("/base/1/16384", 3) and not loaded.is_hot("/base/1/16384", 2)
    assert summary_of_file(path, "/base")["chunks_hydrated"] == 1
    with pytest.raises(ValueError, match="restore the volume"):
        HydrationState.load(path, 2 * CHUNK)
    assert HydrationState.load(tmp_path / "absent.json", CHUNK).summary()["chunks_total"] == 0
