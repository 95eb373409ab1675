"""docs/deploy.md's idle cost and teardown say what the synthesized stack holds (issue 33 §6): what bills when
idle (the dashboard, the alarms, the schedules, a KMS key only with notifications) and what `make destroy`
leaves behind (every resource CloudFormation retains), checked against the template, not written from memory."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"


def section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 5)
    return text[start:end if end > 0 else None]


def retained(template: dict) -> Counter:
    return Counter(r["Type"] for r in template["Resources"].values() if r.get("DeletionPolicy") == "Retain")


def test_the_idle_cost_names_what_bills_by_the_month_in_the_template(plain):
    idle = section("What the stack costs when idle")
    kinds = Counter(r["Type"] for r in plain.template["Resources"].values())
    assert kinds["AWS::CloudWatch::Dashboard"] == 1 and "CloudWatch dashboard" in idle
    assert re.search(rf"\| {kinds['AWS::CloudWatch::Alarm']} CloudWatch alarms", idle), kinds["AWS::CloudWatch::Alarm"]
    schedules = sorted(r["Properties"]["ScheduleExpression"] for r in plain.resources("AWS::Events::Rule").values()
                       if "ScheduleExpression" in r["Properties"])
    assert schedules == ["rate(1 hour)", "rate(15 minutes)"]
    assert "every 15 minutes" in idle and "hourly" in idle
    assert kinds["AWS::KMS::Key"] == 0 and "only with `notifications`" in idle  # the plain stack has no key
    (table,) = plain.resources("AWS::DynamoDB::Table").values()
    assert table["Properties"]["BillingMode"] == "PAY_PER_REQUEST" and "on-demand" in idle
    assert table["Properties"]["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"]


def test_the_teardown_names_every_kind_of_resource_the_stack_retains(plain):
    teardown = section("Teardown")
    kinds = retained(plain.template)
    assert kinds == Counter({"AWS::Logs::LogGroup": kinds["AWS::Logs::LogGroup"], "AWS::S3::Bucket": 2,
                             "AWS::DynamoDB::Table": 1, "AWS::SQS::Queue": 2}), kinds
    assert f"log group ({kinds['AWS::Logs::LogGroup']}, " in teardown
    for words in ("evidence bucket and its access-log bucket", "DynamoDB table", "dead-letter queues"):
        assert words in teardown, words
    assert "make destroy" in teardown
