"""The one place that builds the Powertools logger, tracer and metrics, and turns a step's result model into the
JSON Step Functions keeps (``json_result``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec

from aws_lambda_powertools import Logger, Metrics, Tracer
from pydantic import BaseModel

from cutover_prep.live.names import NAMESPACE, SERVICE  # the metrics' one list of names (live/names.py)

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(service=SERVICE, namespace=NAMESPACE)

P = ParamSpec("P")


def json_result(handler: Callable[P, BaseModel]) -> Callable[P, object]:
    """A handler returns its step's result model; Step Functions gets its JSON: the fields the step set and no
    other (``exclude_unset``), under their JSON names (``by_alias``). A model that writes itself otherwise (no
    nulls, a section in a fixed order) says so in its own serializer, so that every handler is dumped alike."""

    @functools.wraps(handler)
    def dumped(*args: P.args, **kwargs: P.kwargs) -> object:
        return result_json(handler(*args, **kwargs))

    return dumped


def result_json(result: BaseModel) -> object:
    """A step's result model as Step Functions keeps it (what ``json_result`` returns)."""
    return result.model_dump(mode="json", by_alias=True, exclude_unset=True)
