"""WarmSlot: the warm-up's admission control (``warmup.slots``): a unit asks for a slot before it reads
(``acquire``) and gives it back after (``release``)."""

from __future__ import annotations

from collections.abc import Callable

from cutover_prep.dal.store import Store
from cutover_prep.models.steps import RunContext, SlotAnswer, SlotReleased, WarmSlotEvent
from cutover_prep.warmup.slots import Activity, acquire, release


def slot_step(event: WarmSlotEvent, *, store: Store,
              activity: Callable[[RunContext], Activity | None]) -> SlotAnswer | SlotReleased:
    """``activity``: the run's yield signal (``deps.activity_reader``), made only for a unit that asks."""
    if event.action == "acquire":
        return acquire(event.run, event.unit_id, store=store, activity=activity(event.run))
    return release(event.run, event.unit_id, store=store)
