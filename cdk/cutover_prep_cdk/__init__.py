"""CDK app of Cutover Prep: ``build_app`` is used by ``cdk/app.py`` and by the tests."""

from __future__ import annotations

import json
import os
from typing import Any

from aws_cdk import App, Environment

from .config import REPO_ROOT, Config, ConfigError, LayerNotBuilt
from .nag import register as register_nag
from .stack import CutoverPrepStack

__all__ = ["Config", "ConfigError", "CutoverPrepStack", "LayerNotBuilt", "build_app"]


def build_app(
    context: dict[str, Any] | None = None, outdir: str | None = None, nag: bool = True
) -> tuple[App, CutoverPrepStack]:
    """The app with its one stack. Raises ``ConfigError`` on bad or missing context.

    The ``context`` of ``cdk.json`` (settings and feature flags) is applied here too, so that
    tests synthesize what ``cdk synth`` does; ``context`` and the CLI's ``-c`` override it.
    """
    app = App(context={**cdk_json_context(), **(context or {})}, outdir=outdir)
    config = Config.from_node(app.node)
    account = config.account or os.environ.get("CDK_DEFAULT_ACCOUNT")
    region = config.region or os.environ.get("CDK_DEFAULT_REGION")
    # Environment-agnostic unless an account/region is known: synth needs no credentials.
    env = Environment(account=account, region=region) if account and region else None
    stack = CutoverPrepStack(
        app,
        config.stack_name,
        config=config,
        env=env,
        description="Cutover Prep: warm up a restored RDS instance and prove it is ready",
    )
    if nag:
        register_nag(app)
    return app, stack


def cdk_json_context() -> dict[str, Any]:
    return json.loads((REPO_ROOT / "cdk.json").read_text())["context"]
