"""The Lambda runtime as the in-process handlers of the local harness see it: a context whose remaining time counts
down from the function's timeout (time-budget logic behaves as in Lambda), and stdout left to the CLI's result."""

from __future__ import annotations

import sys
import time
import uuid
from typing import Any
from unittest import mock


def lambda_output_off_stdout() -> list[Any]:
    """What a Lambda writes to stdout is its log stream; in-process, stdout is the CLI's result.

    Powertools' Logger writes to the stdout it saw when built: here it goes to stderr. Its Metrics
    prints the metric set when one metric reaches 100 values even with ``POWERTOOLS_METRICS_DISABLED``
    (``AmazonCloudWatchEMFProvider.add_metric``; ``flush_metrics`` skips a disabled set without
    clearing it): a local run has no CloudWatch, so it records no metrics at all."""
    from cutover_prep.observability import logger, metrics

    return [mock.patch.object(logger.registered_handler, "stream", sys.stderr),
            mock.patch.object(metrics, "add_metric", lambda *args, **kwargs: None)]


class FakeContext:
    """The parts of the Lambda context the handlers and Powertools use."""

    def __init__(self, function_name: str, timeout_s: float, region: str = "us-east-1") -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = 512
        # moto's default account; the region the harness's state machines are in
        self.invoked_function_arn = f"arn:aws:lambda:{region}:123456789012:function:{function_name}"
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "local"
        self._deadline = time.monotonic() + timeout_s

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))
