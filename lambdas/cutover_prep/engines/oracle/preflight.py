"""Oracle preflight: not written yet (this module is replaced in the next commit)."""

from __future__ import annotations

from typing import Any


def run(spec: Any, ctx: Any) -> list[Any]:
    from cutover_prep.preflight.model import CONNECTION, FAIL, Check

    return [Check(CONNECTION, "preflight", FAIL, "the Oracle preflight is not written yet")]
