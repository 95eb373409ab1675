"""The one place that builds the Powertools logger, tracer and metrics."""

from aws_lambda_powertools import Logger, Metrics, Tracer

from cutover_prep.live.names import NAMESPACE, SERVICE  # the metrics' one list of names (live/names.py)

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(service=SERVICE, namespace=NAMESPACE)
