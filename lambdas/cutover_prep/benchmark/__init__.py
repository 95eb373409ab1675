"""The benchmark steps (probes, sweep plan, points, cleanup), the write test's scratch objects, and the
evidence they leave (metrics collection and analysis of a run)."""
