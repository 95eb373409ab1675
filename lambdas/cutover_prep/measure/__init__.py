"""Measuring one benchmark point or probe, the same way for every engine.

Named for what it does. "Sweep" named three things before: the benchmark's plan of points
over IO sizes and sessions (still "the sweep", planned in ``benchmark``), this package
(then ``sweep/``, which also held the engines' drivers), and the evidence step
(``sweep_evidence``). Here is only the engine-neutral part:

- ``model``: a point's measurement (``PointMeasurement``), its latency histogram and percentiles;
- the driver each engine implements (``engines/<name>/bench.py``), ``BenchDriver``, and what it is
  given (``PointSpec``, ``SweepTarget``, ``SweepOptions``) are on the engines' floor: ``engines/bench.py``;
- ``runner``: runs a probe or a point through a driver, in its own recorded time window;
- ``sample``: which blocks the probes and random points read (seeded, engine-neutral; each
  engine says which of its locators are block-readable, through ``engines.registry``).
"""
