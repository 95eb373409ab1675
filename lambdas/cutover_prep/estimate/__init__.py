"""The estimate of a warm-up before it starts (what it will read, at what rate, how long, what it costs) and
beside what the run did.

- ``compute``: the estimate itself, pure: the rate and its source, the time, the cost, the terminal lines;
- ``run``: the run's own estimate (Discover) and ``findings.estimate`` (Finalize: estimate vs actual);
- ``inputs``: what ``cutover-prep estimate`` (``cli/estimate.py``, the click command) feeds it beyond the
  plan: earlier local runs' findings, the restored instance's price per hour, the selection.

Import each from its module: this package imports none of them.
"""
