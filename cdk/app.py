#!/usr/bin/env python3
"""Entry point of the CDK app (see cdk.json). Context keys: docs/deploy.md."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cutover_prep_cdk import ConfigError, build_app  # noqa: E402


def main() -> None:
    try:
        app, _ = build_app()
    except ConfigError as exc:
        sys.exit(f"cutover-prep: {exc}")
    app.synth()


if __name__ == "__main__":
    main()
