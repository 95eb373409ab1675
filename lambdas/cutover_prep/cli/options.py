"""Option types of the command line that click does not have."""

from __future__ import annotations

import math
from typing import Any

import click


class FiniteFloatRange(click.FloatRange):
    """``click.FloatRange`` without NaN and infinity: NaN passes every range check (all comparisons
    with it are false) and ``inf`` passes one without a maximum; neither is a number of seconds or MiB/s."""

    name = "finite float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number
