"""Context keys of the restore trigger (issue 16): turn it off, turn its sweep off, set its lookback."""

from __future__ import annotations

import pytest

from tests.infrastructure.conftest import Synth, functions_by_handler


def _trigger_rules(synth: Synth) -> tuple[list[dict], list[str]]:
    handler, _ = functions_by_handler(synth)["handlers.on_restore.handler"]
    rules = [r["Properties"] for r in synth.resources("AWS::Events::Rule").values()
             if r["Properties"]["Targets"][0]["Arn"] == {"Fn::GetAtt": [handler, "Arn"]}]
    return ([r["EventPattern"] for r in rules if r.get("EventPattern")],
            [r["ScheduleExpression"] for r in rules if r.get("ScheduleExpression")])


def _lookback(synth: Synth) -> str:
    _, function = functions_by_handler(synth)["handlers.on_restore.handler"]
    return function["Properties"]["Environment"]["Variables"]["RESTORE_LOOKBACK_HOURS"]


def test_by_default_both_rules_and_a_24_hour_lookback(plain: Synth) -> None:
    patterns, schedules = _trigger_rules(plain)
    assert len(patterns) == 1 and schedules == ["rate(15 minutes)"]
    assert _lookback(plain) == "24"


def test_the_trigger_off_leaves_no_rule(synth_factory) -> None:
    synth = synth_factory({"restore_trigger": "false"})
    assert _trigger_rules(synth) == ([], [])
    assert synth.error is None  # cdk-nag still passes


def test_the_sweep_off_and_a_longer_lookback(synth_factory) -> None:
    synth = synth_factory({"restore_sweep": "false", "restore_lookback_hours": "72"})
    patterns, schedules = _trigger_rules(synth)
    assert len(patterns) == 1 and schedules == []
    assert _lookback(synth) == "72"


@pytest.mark.parametrize("value", ["0", "400", "a day"])
def test_a_bad_lookback_is_named(value) -> None:
    from cutover_prep_cdk import build_app
    from cutover_prep_cdk.config import ConfigError

    with pytest.raises(ConfigError, match="restore_lookback_hours"):
        build_app({"skip_layer_build": True, "restore_lookback_hours": value})
