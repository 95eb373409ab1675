"""The run's typed records: what a run stores (DynamoDB items, S3 evidence) and hands on between steps.

One module a record family, each model a subclass of ``base.Record`` (a ``schema_version`` on every stored
record; ``Record.read`` reads an older version by the upgrades its class names). ``dal.store.Store`` reads
and writes only these; the phases (warm-up, findings, report, ...) import records, never each other.
"""
