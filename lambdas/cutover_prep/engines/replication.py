"""The contract of the gate's replication hook (``registry.EngineFamily.replication``, issue 36 §2): what each
engine's ``check`` (``engines/postgres/replication.py``, ``engines/mysql/replication.py``) finds on the target."""

from __future__ import annotations

from typing import Any, NamedTuple


class Found(NamedTuple):
    """Native replication as the target says it: ``state`` (open, closed, unknown), one line why, and the
    evidence it was judged on (the server's own fields, as the gate's condition keeps them)."""

    state: str
    summary: str
    evidence: dict[str, Any]
