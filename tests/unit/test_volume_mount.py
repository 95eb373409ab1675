"""fuse_unavailable(): one line saying why the emulated volume cannot be mounted, and what to do;
a daemon that fails at mount is a VolumeError with its log, and nothing is left behind."""

from __future__ import annotations

import os
import shutil

import pytest

from cutover_prep.local.volume import EmulatedVolume, VolumeError, mount


@pytest.fixture
def usable(monkeypatch):
    monkeypatch.setattr(mount.sys, "platform", "linux")
    monkeypatch.setattr(mount.os, "geteuid", lambda: 0)
    monkeypatch.setattr(mount.os.path, "exists", lambda p: True)
    monkeypatch.setattr(mount.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(mount.ctypes.util, "find_library", lambda name: "libfuse3.so.3")
    monkeypatch.setattr(mount.importlib.util, "find_spec", lambda name: object())
    return monkeypatch


def test_usable_is_none(usable):
    assert mount.fuse_unavailable() is None


@pytest.mark.parametrize(("patch", "words"), [
    (lambda m: m.setattr(mount.os, "geteuid", lambda: 1000), ["not root", "run as root"]),
    (lambda m: m.setattr(mount.os.path, "exists", lambda p: False), ["/dev/fuse", "--device /dev/fuse"]),
    (lambda m: m.setattr(mount.shutil, "which", lambda name: None), ["fusermount3", "make fuse"]),
    (lambda m: m.setattr(mount.ctypes.util, "find_library", lambda name: None), ["libfuse3", "make fuse"]),
    (lambda m: m.setattr(mount.importlib.util, "find_spec", lambda name: None), ["mfusepy", "make install"]),
    (lambda m: m.setattr(mount.sys, "platform", "darwin"), ["darwin", "Linux"]),
])
def test_each_reason_is_one_line_with_what_to_do(usable, patch, words):
    patch(usable)
    reason = mount.fuse_unavailable()
    assert reason and "\n" not in reason
    for word in words:
        assert word in reason


@pytest.mark.skipif(mount.fuse_unavailable() is not None, reason=mount.fuse_unavailable() or "")
def test_a_daemon_that_cannot_mount_is_a_volume_error_and_leaves_no_process(tmp_path):
    vol = EmulatedVolume(tmp_path)
    vol.backing.mkdir(parents=True)
    vol.state_path.write_text("{not json")  # the daemon fails reading its state
    with pytest.raises(VolumeError, match="exited at mount"):
        vol.mount()
    assert vol._proc is None and not os.path.ismount(vol.mountpoint)
    shutil.rmtree(tmp_path, ignore_errors=True)
