"""``report.html``: the run as one self-contained page (placeholder until the report lands)."""

from __future__ import annotations

import html
import json
from typing import Any


def render_report(findings: dict[str, Any]) -> str:
    verdict = (findings.get("verdict") or {}).get("verdict", "NO VERDICT")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(verdict)}</title></head>"
            f"<body><pre>{html.escape(json.dumps(findings, indent=1, default=str))}</pre></body></html>")
