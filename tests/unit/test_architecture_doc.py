"""docs/architecture.md matches the code: every path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PKG = REPO / "lambdas" / "cutover_prep"


def test_every_path_named_in_the_architecture_page_exists():
    text = (REPO / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`([\w./<>-]+(?:/|\.py|\.json|\.md))(?:#[\w-]+)?`", text))
    assert len(named) > 30
    missing = []
    for path in named:
        if "<" in path:  # a pattern (engines/<name>/): its folder must exist
            path = path.split("<")[0]
        if "/" in path.rstrip("/") or (REPO / path).exists():  # a path from the repository root or the package
            found = any(c.exists() for c in (REPO / path, PKG / path, REPO / "lambdas" / path))
        else:  # a name in the folder its table row names
            found = any(REPO.glob(f"lambdas/**/{path.rstrip('/')}")) or any(REPO.glob(f"cdk/**/{path}"))
        if not found:
            missing.append(path)
    assert missing == []
