"""The first-touch rule on two probe medians (the verdict's WARM_VS_COLD, and ``cutover-prep analyze``'s): warm
reads against cold ones, with the thresholds' noise allowances. Shared: the verdict (a phase) and the IO analysis
both judge by it, so it stands below both."""

from __future__ import annotations

from cutover_prep.dal.records.findings import Reason
from cutover_prep.models.thresholds import Thresholds


def _reason(code: str, ok: bool, message: str, *, judged: bool | None = None) -> Reason:
    """One rule's answer; ``judged=False``: ok, but not judged on this run's evidence (as ``verdict._reason``)."""
    return Reason(code=code, ok=ok, message=message, **({"judged": judged} if judged is not None else {}))


def warm_vs_cold(c: float, w: float, t: Thresholds, *, overlap: int | None) -> Reason:
    """The rule of ``_probe_reasons`` on the two medians in ms."""
    figures = f"warm median read {w:.2f} ms vs cold {c:.2f} ms"
    if overlap:
        figures += f"; the warm probe re-read {overlap} of the cold probe's blocks"
    if w > c * t.max_warm_to_cold_latency and w - c > t.latency_noise_ms and w <= t.fast_read_ms:
        # both fast: a loaded machine's noise as often as anything; said, never passed, not a failure
        return _reason("WARM_VS_COLD", True,
                       f"warm reads are slower than cold, though fast: {figures} ({w / c:.2f}× the cold median); "
                       f"at most {t.fast_read_ms:g} ms is fast, so no first-touch penalty is measured either way",
                       judged=False)
    if w > c * t.max_warm_to_cold_latency and w - c > t.latency_noise_ms:
        return _reason("WARM_VS_COLD", False,
                       f"warm reads are slower than cold: {figures} ({w / c:.2f}× the cold median, noise allowance "
                       f"{t.max_warm_to_cold_latency:g}× or {t.latency_noise_ms:g} ms): blocks the warm-up missed, "
                       "evicted or a busy instance; look at the warm probe's histogram before the cutover")
    if c <= t.fast_read_ms:
        return _reason("WARM_VS_COLD", True,
                       f"no first-touch penalty measured: {figures}; the cold reads were already at most "
                       f"{t.fast_read_ms:g} ms (a volume not restored from a snapshot, or already initialized), "
                       "so the probes cannot show what the warm-up removed", judged=False)
    speedup = c / w if w > 0 else float("inf")
    if w <= t.fast_read_ms or speedup >= t.min_warm_speedup:
        return _reason("WARM_VS_COLD", True, f"first-touch penalty removed: {figures} (cold/warm {speedup:.2f}×)")
    return _reason("WARM_VS_COLD", False,
                   f"the first-touch penalty remains: {figures} (cold/warm {speedup:.2f}×; needs warm at most "
                   f"{t.fast_read_ms:g} ms or {t.min_warm_speedup:g}× faster): the warm probe's fresh blocks still "
                   "read at first-touch speed, so the warm-up did not reach them")
