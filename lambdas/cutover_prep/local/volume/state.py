"""Which chunks of the emulated volume are hydrated, persisted in a state file.

A "restore" marks every chunk of every file in the backing directory cold: those chunks are the
snapshot's. Chunks a file gains later (it grows, or is created after the restore) were never in
the snapshot and are served warm; they are not counted in ``chunks_total``. A file that the state
file does not know (created while no daemon ran) is warm too.

State file: JSON ``{"version": 1, "chunk_kib": N, "files": {relpath: base64(zlib(one byte per
chunk, 1 = hydrated))}}``, written atomically.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import zlib
from pathlib import Path
from typing import Any

VERSION = 1


class HydrationState:
    def __init__(self, chunk_bytes: int, files: dict[str, bytearray] | None = None) -> None:
        self.chunk_bytes = chunk_bytes
        self._files: dict[str, bytearray] = files or {}
        self.mutex = threading.Lock()
        self.dirty = False

    # --- building ----------------------------------------------------------------------
    @classmethod
    def restored(cls, backing: Path, chunk_bytes: int) -> HydrationState:
        """Every chunk of every regular file under ``backing`` cold."""
        files: dict[str, bytearray] = {}
        for root, _dirs, names in os.walk(backing):
            for name in names:
                full = os.path.join(root, name)
                st = os.lstat(full)
                if os.path.isfile(full) and not os.path.islink(full):
                    rel = "/" + os.path.relpath(full, backing)
                    files[rel] = bytearray(-(-st.st_size // chunk_bytes))
        state = cls(chunk_bytes, files)
        state.dirty = True
        return state

    @classmethod
    def load(cls, path: Path, chunk_bytes: int) -> HydrationState:
        """The saved state; an empty (all warm) one when there is no state file."""
        if not path.exists():
            return cls(chunk_bytes)
        data = json.loads(path.read_text())
        if data.get("version") != VERSION or data.get("chunk_kib") * 1024 != chunk_bytes:
            raise ValueError(f"{path}: state of another version or chunk size "
                             f"({data.get('chunk_kib')} KiB); restore the volume to start over")
        files = {rel: bytearray(zlib.decompress(base64.b64decode(blob))) for rel, blob in data["files"].items()}
        return cls(chunk_bytes, files)

    def save(self, path: Path) -> None:
        with self.mutex:
            files = {rel: base64.b64encode(zlib.compress(bytes(bits))).decode() for rel, bits in self._files.items()}
            self.dirty = False
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"version": VERSION, "chunk_kib": self.chunk_bytes // 1024, "files": files}))
        os.replace(tmp, path)

    def reset_from(self, backing: Path) -> None:
        fresh = HydrationState.restored(backing, self.chunk_bytes)
        with self.mutex:
            self._files = fresh._files
            self.dirty = True

    # --- queries (callers hold no lock) --------------------------------------------------
    def cold_chunks(self, rel: str, offset: int, size: int) -> list[int]:
        """The cold chunks a request of ``size`` bytes at ``offset`` touches."""
        if size <= 0:
            return []
        first, last = offset // self.chunk_bytes, (offset + size - 1) // self.chunk_bytes
        with self.mutex:
            bits = self._files.get(rel)
            if bits is None:
                return []
            return [c for c in range(first, min(last, len(bits) - 1) + 1) if not bits[c]]

    def is_hot(self, rel: str, chunk: int) -> bool:
        with self.mutex:
            bits = self._files.get(rel)
            return bits is None or chunk >= len(bits) or bool(bits[chunk])

    def mark(self, rel: str, chunk: int) -> bool:
        """Mark one chunk hydrated; False if it already was (or is not a snapshot chunk)."""
        with self.mutex:
            bits = self._files.get(rel)
            if bits is None or chunk >= len(bits) or bits[chunk]:
                return False
            bits[chunk] = 1
            self.dirty = True
            return True

    def summary(self, prefix: str = "/") -> dict[str, Any]:
        with self.mutex:
            total = hydrated = files = 0
            for rel, bits in self._files.items():
                if rel.startswith(prefix):
                    files += 1
                    total += len(bits)
                    hydrated += bits.count(1)
        pct = round(100.0 * hydrated / total, 3) if total else None
        return {"files": files, "chunks_total": total, "chunks_hydrated": hydrated, "hydrated_pct": pct}

    # --- namespace changes ---------------------------------------------------------------
    def truncate(self, rel: str, length: int) -> None:
        with self.mutex:
            bits = self._files.get(rel)
            keep = -(-length // self.chunk_bytes)
            if bits is not None and keep < len(bits):
                del bits[keep:]
                self.dirty = True

    def drop(self, rel: str) -> None:
        with self.mutex:
            if self._files.pop(rel, None) is not None:
                self.dirty = True

    def rename(self, old: str, new: str) -> None:
        """A file or a directory (everything under it) moved."""
        with self.mutex:
            self._files.pop(new, None)
            moved = {rel: bits for rel, bits in self._files.items() if rel == old or rel.startswith(old + "/")}
            for rel, bits in moved.items():
                del self._files[rel]
                self._files[new + rel[len(old):]] = bits
            self.dirty = True


def summary_of_file(path: Path, prefix: str = "/") -> dict[str, Any]:
    """``summary(prefix)`` of a saved state file (chunk size taken from the file)."""
    data = json.loads(path.read_text())
    return HydrationState.load(path, data["chunk_kib"] * 1024).summary(prefix)
