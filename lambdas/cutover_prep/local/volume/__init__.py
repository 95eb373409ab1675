"""An emulated EBS volume restored from a snapshot: a FUSE passthrough filesystem (local runs only).

The first read of each 512 KiB chunk pays a fetch latency (lognormal, at most ``max_fetches`` at
once); hydrated chunks are served at the storage's speed, under the IOPS and throughput caps of
the emulated storage type and instance class, with EBS SSD IO accounting. It runs as its own
process (``python -m cutover_prep.local.volume.daemon``), mounted ``direct_io`` (the page cache
cannot hide the penalty) and ``allow_other`` (PostgreSQL runs as another OS user).

API (names may grow, not change)::

    from cutover_prep.local.volume import EmulatedVolume, VolumeProfile, DEFAULT_PROFILE, fuse_unavailable

    reason = fuse_unavailable()          # None, or one line: why not and what to do
    profile = VolumeProfile(storage_type="gp2", allocated_gb=100, instance_class="db.t3.medium")
    profile.ceiling_mib_per_s, profile.ceiling_iops   # wall-clock caps (scaled by time_scale)
    with EmulatedVolume(workdir, profile) as vol:     # mounts workdir/mnt over workdir/backing
        ...write files under vol.mountpoint...
        vol.restore()                    # every chunk cold (mounted or not)
        vol.counters()                   # chunks_total, chunks_hydrated, hydrated_pct, bytes_served,
                                         # bytes_written, ios_counted, fetches, fetch_wait_s,
                                         # throttle_s, first_touch_ms_p50, profile, ...
        vol.hydrated_pct("/pg_tblspc")   # of the files under a prefix
    # unmounted on exit (also on exceptions and Ctrl-C); the state file survives for the next mount

``InvalidProfile`` (a ValueError) names the CLI flag (--storage-type, --allocated-gb, --iops,
--storage-throughput, --instance-class) and the fix. Modules: ``profile`` (caps, calibration,
time scale), ``accounting`` (IO counting, buckets), ``state`` (hydration bitmaps, state file),
``fs`` (the FUSE operations), ``daemon`` (the process), ``mount`` (mounting, the context manager).
"""

from cutover_prep.local.volume.mount import (
    EmulatedVolume,
    FuseUnavailable,
    VolumeError,
    force_unmount,
    fuse_unavailable,
)
from cutover_prep.local.volume.profile import DEFAULT_PROFILE, InvalidProfile, VolumeProfile

__all__ = ["DEFAULT_PROFILE", "EmulatedVolume", "FuseUnavailable", "InvalidProfile", "VolumeError",
           "VolumeProfile", "force_unmount", "fuse_unavailable"]
