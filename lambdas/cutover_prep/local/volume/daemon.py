"""The emulator's process: ``python -m cutover_prep.local.volume.daemon --backing B --mountpoint M
--state S --counters C --profile JSON [--parent-pid P]`` (``mount.EmulatedVolume`` starts it).

It runs libfuse's multithreaded loop in the foreground until it is unmounted or sent SIGTERM /
SIGINT (libfuse then unmounts). It dies with its parent: a watchdog checks the parent pid every
0.5 s and unmounts when it is gone. SIGUSR1: write the counters and the state file now. SIGUSR2: restore (every chunk
cold), then write both. Otherwise both are written every 0.5 s (the state only when changed) and
on exit. The counters file carries ``seq``, raised at every write, so a caller can wait for one.

It asks for a larger share of the CPU (nice ``DAEMON_NICE``, as root) before libfuse starts its
threads, which inherit it: it needs little CPU, but needs it at once when a request arrives or a
sleep ends, and on a busy machine every wait for a CPU would otherwise be added to the emulated
latencies. The counters say what it got (``nice``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import select
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from cutover_prep.local.volume.profile import VolumeProfile
from cutover_prep.local.volume.state import HydrationState

WRITE_EVERY_S = 0.5
MAX_THREADS = 128
DAEMON_NICE = -10
_STOPPING = 0  # a byte on the wake-up pipe that is no signal's number: the filesystem is being unmounted


def _raise_priority(nice: int = DAEMON_NICE) -> int:
    """Set this thread's nice (threads started later inherit it); the nice it has after (unchanged when refused)."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    except OSError as exc:
        logging.getLogger(__name__).warning("could not raise the daemon's CPU priority: %s", exc)
    return os.getpriority(os.PRIO_PROCESS, 0)


def _orphaned(parent_pid: int) -> bool:
    """The parent is gone (this process was re-parented). Not PR_SET_PDEATHSIG: that fires when
    the parent *thread* that started the daemon ends, and a volume may be mounted from a thread."""
    return os.getppid() != parent_pid


class Daemon:
    def __init__(self, args: argparse.Namespace) -> None:
        from cutover_prep.local.volume.fs import Stats, VolumeFS  # needs libfuse: imported here only

        self.backing, self.mountpoint = Path(args.backing), Path(args.mountpoint)
        self.state_path, self.counters_path = Path(args.state), Path(args.counters)
        self.profile = VolumeProfile.from_dict(json.loads(args.profile), json.loads(args.caps) if args.caps else None)
        self.parent_pid = args.parent_pid
        rng = random.Random(args.seed)
        self.state = HydrationState.load(self.state_path, self.profile.chunk_bytes)
        self.stats = Stats(rng)
        self.fs = VolumeFS(self.backing, self.profile, self.state, self.stats, rng)
        self.fs.init = self._started  # mfusepy calls init() once mounted
        self.fs.destroy = self._stopping
        self.nice = _raise_priority()  # before libfuse's threads exist
        self.seq = 0
        self.mounted = False
        self.restores = 0
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        for sig in (signal.SIGUSR1, signal.SIGUSR2):
            signal.signal(sig, lambda *_: None)
        signal.set_wakeup_fd(self._wake_w)  # the C handler writes the signal number even while fuse_main runs
        self._writer = threading.Thread(target=self._write_loop, name="volume-writer", daemon=True)

    # --- lifecycle -----------------------------------------------------------------------
    def _started(self, path: str) -> None:
        self.mounted = True
        self._writer.start()

    def _stopping(self, path: str) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):  # wake the writer from its select (a full pipe is awake already)
            os.write(self._wake_w, bytes([_STOPPING]))
        if self._writer.is_alive():
            self._writer.join(timeout=5)
        self.mounted = False
        self.write(state=True)

    def run(self) -> None:
        from mfusepy import FUSE

        FUSE(self.fs, str(self.mountpoint), foreground=True, allow_other=True, default_permissions=True,
             direct_io=True, fsname="cutover-volume", subtype="cutover", max_threads=MAX_THREADS)

    # --- evidence ------------------------------------------------------------------------
    def counters(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "pid": os.getpid(), "mounted": self.mounted,
                               "restores": self.restores, "nice": self.nice, "written_at": time.time()}
        out.update(self.state.summary())
        out.update(self.stats.snapshot(self.profile.time_scale))
        credits = self.fs.limits.credits
        out["burst_credits_left"] = None if credits is None else max(0, round(credits.balance))
        out["profile"] = self.profile.describe()
        return out

    def write(self, *, state: bool) -> None:
        if state or self.state.dirty:
            self.state.save(self.state_path)
        self.seq += 1
        tmp = self.counters_path.with_name(self.counters_path.name + ".tmp")
        tmp.write_text(json.dumps(self.counters(), separators=(",", ":")))  # compact: served_seconds grows per second
        os.replace(tmp, self.counters_path)

    def _write_loop(self) -> None:
        force = False
        while not self._stop.is_set():
            if _orphaned(self.parent_pid):  # unmount and go
                os.kill(os.getpid(), signal.SIGTERM)
            try:  # at once when mounted (the parent waits for this first write), then every WRITE_EVERY_S
                self.write(state=force)
                if force:  # the caller waits for the second write after the one it saw (EmulatedVolume.
                    self.write(state=False)  # _signal_and_wait): now, not WRITE_EVERY_S later
            except OSError as exc:  # a full disk must not kill the filesystem
                logging.getLogger(__name__).warning("could not write the counters: %s", exc)
            ready, _, _ = select.select([self._wake_r], [], [], WRITE_EVERY_S)
            force = False
            if ready:
                for signum in os.read(self._wake_r, 64):
                    if signum == _STOPPING:  # _stopping(): the loop ends now, not WRITE_EVERY_S later
                        continue
                    if signum == signal.SIGUSR2:
                        self.state.reset_from(self.backing)
                        self.restores += 1
                    force = True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cutover_prep.local.volume.daemon")
    parser.add_argument("--backing", required=True)
    parser.add_argument("--mountpoint", required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--counters", required=True)
    parser.add_argument("--profile", default="{}", help="the VolumeProfile as JSON")
    parser.add_argument("--caps", default=None, help="the profile's caps as JSON (VolumeProfile.caps), else computed")
    parser.add_argument("--parent-pid", type=int, default=os.getppid())
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if _orphaned(args.parent_pid):
        return 1
    daemon = Daemon(args)
    daemon.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
