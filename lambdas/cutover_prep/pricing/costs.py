"""What a run costs in Lambda and Step Functions, at AWS's published list prices (the estimate's cost, and a
comparison's run cost)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from cutover_prep.workflows import FUNCTIONS

# Prices, us-east-1, x86, list prices before the free tiers (checked 2026-11-23):
# https://aws.amazon.com/lambda/pricing/ - duration $0.0000166667 per GB-second (first 6 billion GB-s a month),
# requests $0.20 per 1 million.
LAMBDA_USD_PER_GB_SECOND = 0.0000166667
LAMBDA_USD_PER_REQUEST = 0.20 / 1_000_000
# https://aws.amazon.com/step-functions/pricing/ - Standard workflows, $0.025 per 1,000 state transitions.
SFN_USD_PER_TRANSITION = 0.025 / 1_000
PRICES_SOURCE = ("aws.amazon.com/lambda/pricing and aws.amazon.com/step-functions/pricing, us-east-1 x86 list "
                 "prices (2026-11-23), free tiers not deducted")
# State transitions of statemachines/cutover-run.asl.json on its paths without failures (each branch and wait loop once;
# tests/unit/test_estimate.py derives both from the file): the run itself, and each work unit in the WarmUp Map.
TRANSITIONS_PER_RUN = 27
TRANSITIONS_PER_UNIT = 7
LAMBDA_REQUESTS_PER_UNIT = 3  # AcquireSlot, WarmUnit, ReleaseSlot
WARM_FUNCTION = "WarmUnit"


class Cost(BaseModel):
    lambda_gb_seconds: float
    lambda_requests: int
    lambda_usd: float
    state_transitions: int
    sfn_usd: float
    instance_hours: float | None = None
    instance_price_per_hour_usd: float | None = None
    instance_usd: float | None = None
    prices: str = PRICES_SOURCE
    notes: list[str] = Field(default_factory=list)


def cost_of(*, seconds: float, readers: int, units: int, restore: bool = False,
            instance_price_per_hour_usd: float | None = None, price_note: str | None = None) -> Cost:
    memory_gb = FUNCTIONS[WARM_FUNCTION].memory_mb / 1024
    gb_s = memory_gb * seconds * readers
    requests = units * LAMBDA_REQUESTS_PER_UNIT
    transitions = TRANSITIONS_PER_RUN + units * TRANSITIONS_PER_UNIT
    notes = ["the benchmark's points, waits for a slot and a unit's continuations add transitions and "
             "invocations not counted here"]
    cost = Cost(lambda_gb_seconds=round(gb_s, 1), lambda_requests=requests,
                lambda_usd=round(gb_s * LAMBDA_USD_PER_GB_SECOND + requests * LAMBDA_USD_PER_REQUEST, 6),
                state_transitions=transitions, sfn_usd=round(transitions * SFN_USD_PER_TRANSITION, 6), notes=notes)
    if restore:
        cost.instance_hours = round(seconds / 3600, 4)
        if instance_price_per_hour_usd is not None:
            cost.instance_price_per_hour_usd = instance_price_per_hour_usd
            cost.instance_usd = round(cost.instance_hours * instance_price_per_hour_usd, 6)
        cost.notes.append(price_note or "the restored instance's price per hour is not known: its hours are not in "
                                        "cost_usd")
    return cost
