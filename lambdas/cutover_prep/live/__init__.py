"""The live view of a run: the custom metrics the functions emit and the CloudWatch dashboard that shows
them (``cdk/cutover_prep_cdk/dashboard.py``). ``names`` is pure data, read by both sides; ``emit`` is the
Lambda side (Powertools Metrics). Nothing is imported here, so the CDK can read ``names`` alone."""
