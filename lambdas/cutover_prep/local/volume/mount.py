"""Mounting the emulated volume: ``fuse_unavailable()`` and the ``EmulatedVolume`` context manager."""

from __future__ import annotations

import atexit
import ctypes.util
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cutover_prep.local.volume.profile import DEFAULT_PROFILE, VolumeProfile
from cutover_prep.local.volume.state import HydrationState, summary_of_file

MOUNT_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 10.0
FLUSH_TIMEOUT_S = 5.0


class VolumeError(RuntimeError):
    """The emulated volume could not be mounted, unmounted or asked."""


class FuseUnavailable(VolumeError):
    """FUSE cannot be used on this machine; the message says why and what to do."""


def fuse_unavailable() -> str | None:
    """None when the emulated volume can be mounted here, else one line saying why and what to do."""
    if not sys.platform.startswith("linux"):
        return f"no FUSE emulation on {sys.platform}: it needs Linux"
    if os.geteuid() != 0:
        return "no FUSE emulation: not root (mounting with allow_other for PostgreSQL needs root); run as root"
    if not os.path.exists("/dev/fuse"):
        return "no FUSE emulation: /dev/fuse is missing (a container needs --device /dev/fuse)"
    if shutil.which("fusermount3") is None or ctypes.util.find_library("fuse3") is None:
        return "no FUSE emulation: fusermount3 or libfuse3 is missing; run `make fuse` as root"
    if importlib.util.find_spec("mfusepy") is None:
        return "no FUSE emulation: the Python package mfusepy is missing; run `make install`"
    return None


def _is_mount(path: Path) -> bool:
    try:
        return os.path.ismount(path)
    except OSError:  # a dead FUSE mount: "Transport endpoint is not connected"
        return True


def force_unmount(path: Path) -> None:
    """Detach a (possibly dead) mount at ``path``: fusermount3 -u -z, then umount -l."""
    for cmd in (["fusermount3", "-u", "-z", str(path)], ["umount", "-l", str(path)]):
        if not _is_mount(path):
            return
        if shutil.which(cmd[0]):
            subprocess.run(cmd, capture_output=True, check=False)


class EmulatedVolume:
    """A restored EBS volume over ``workdir/backing``, mounted at ``workdir/mnt``.

    Files: ``volume-state.json`` (hydration), ``volume-counters.json`` (counters),
    ``daemon.log``. ``mount()`` makes ``workdir`` traversable by others (the database runs as
    another OS user); its parents must be too (``/tmp`` is). ``restore()`` works mounted (the
    daemon resets its state at once) or not (the state file is rewritten); either way every chunk
    of every file is cold afterwards.
    """

    def __init__(self, workdir: Path, profile: VolumeProfile = DEFAULT_PROFILE, *, seed: int | None = None) -> None:
        self.workdir = Path(workdir).resolve()
        self.profile = profile
        self.seed = seed
        self.backing = self.workdir / "backing"
        self.mountpoint = self.workdir / "mnt"
        self.state_path = self.workdir / "volume-state.json"
        self.counters_path = self.workdir / "volume-counters.json"
        self.log_path = self.workdir / "daemon.log"
        self._proc: subprocess.Popen[bytes] | None = None

    # --- lifecycle -----------------------------------------------------------------------
    @property
    def mounted(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and _is_mount(self.mountpoint)

    def mount(self) -> EmulatedVolume:
        reason = fuse_unavailable()
        if reason:
            raise FuseUnavailable(reason)
        if self._proc is not None:
            return self
        self.backing.mkdir(parents=True, exist_ok=True)
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        # the database's OS user (postgres, pgserver) must reach the mountpoint
        self.workdir.chmod(self.workdir.stat().st_mode | 0o055)
        force_unmount(self.mountpoint)  # a stale mount of an earlier run
        self.counters_path.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "cutover_prep.local.volume.daemon", "--backing", str(self.backing),
               "--mountpoint", str(self.mountpoint), "--state", str(self.state_path),
               "--counters", str(self.counters_path), "--profile", json.dumps(self.profile.to_dict()),
               "--parent-pid", str(os.getpid())]
        if self.profile.limits:  # computed here once: the daemon need not import the analyser's table
            cmd += ["--caps", json.dumps(self.profile.caps)]
        if self.seed is not None:
            cmd += ["--seed", str(self.seed)]
        with open(self.log_path, "ab") as log:
            # its own session: a Ctrl-C reaches the parent, which unmounts in order
            self._proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        atexit.register(self.unmount)
        try:
            self._wait_mounted()
        except BaseException:  # a timeout, the daemon's failure, Ctrl-C: leave nothing behind
            self.unmount()
            raise
        return self

    def _wait_mounted(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + MOUNT_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise VolumeError(f"the volume daemon exited at mount: {self._log_tail()}")
            if _is_mount(self.mountpoint) and self._read_counters().get("mounted"):
                return
            time.sleep(0.05)
        raise VolumeError(f"the volume was not mounted within {MOUNT_TIMEOUT_S:.0f} s: {self._log_tail()}")

    def unmount(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)  # libfuse leaves its loop, the daemon saves and unmounts
                try:
                    proc.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        force_unmount(self.mountpoint)
        atexit.unregister(self.unmount)

    def __enter__(self) -> EmulatedVolume:
        return self.mount()

    def __exit__(self, *exc: object) -> None:
        self.unmount()

    # --- restore and evidence ------------------------------------------------------------
    def restore(self) -> None:
        """Every chunk of every file cold, as on a volume just created from a snapshot."""
        if self.mounted:
            self._signal_and_wait(signal.SIGUSR2)
        else:
            self.backing.mkdir(parents=True, exist_ok=True)
            HydrationState.restored(self.backing, self.profile.chunk_bytes).save(self.state_path)

    def counters(self) -> dict[str, Any]:
        """The daemon's counters, fresh when mounted (it is asked to write them), else the last written."""
        if self.mounted:
            return self._signal_and_wait(signal.SIGUSR1)
        counters = self._read_counters()
        if not counters and self.state_path.exists():
            counters = {**summary_of_file(self.state_path), "mounted": False}
        return counters

    def hydrated_pct(self, prefix: str | Path = "/") -> float | None:
        """Hydrated % of the snapshot chunks of files under ``prefix`` (relative to the volume, or a
        path under the mountpoint or the backing directory); None when there are none."""
        if self.mounted:
            self._signal_and_wait(signal.SIGUSR1)
        if not self.state_path.exists():
            return None
        return summary_of_file(self.state_path, self._relative(prefix))["hydrated_pct"]

    def _relative(self, prefix: str | Path) -> str:
        text = str(prefix)
        for root in (str(self.mountpoint), str(self.backing)):
            if text == root or text.startswith(root + "/"):
                text = text[len(root):]
        return "/" + text.lstrip("/")

    def _read_counters(self) -> dict[str, Any]:
        try:
            return json.loads(self.counters_path.read_text())
        except (OSError, ValueError):
            return {}

    def _signal_and_wait(self, signum: int) -> dict[str, Any]:
        """Ask the daemon to write (SIGUSR1) or restore and write (SIGUSR2); its counters after.

        A write that began before the signal may hold older figures, so the answer is the second
        write after the one on disk (for a restore: the first that counts it)."""
        assert self._proc is not None
        before = self._read_counters()
        seq, restores = before.get("seq", -1), before.get("restores", 0)
        self._proc.send_signal(signum)
        deadline = time.monotonic() + FLUSH_TIMEOUT_S
        while time.monotonic() < deadline:
            counters = self._read_counters()
            done = (counters.get("restores", 0) > restores if signum == signal.SIGUSR2
                    else counters.get("seq", -1) > seq + 1)
            if done:
                return counters
            time.sleep(0.02)
        raise VolumeError(f"the volume daemon did not answer within {FLUSH_TIMEOUT_S:.0f} s: {self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(lines[-3:]) or "(empty log)"
