"""The one place that builds the Powertools logger, tracer and metrics."""

from aws_lambda_powertools import Logger, Metrics, Tracer

SERVICE = "cutover-prep"
NAMESPACE = "CutoverPrep"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(service=SERVICE, namespace=NAMESPACE)
