"""cdk-nag 3 registration and the helpers every acknowledgment goes through.

cdk-nag 3 is a CDK policy-validation plugin (``Validations.of(app).add_plugins``); an
unacknowledged finding makes ``app.synth()`` raise ``ValidationFailed`` and is written to
``cdk.out/validation-report.json``. Each acknowledgment names one finding and says why.

cdk-nag names a wildcard-resource finding by the resource only (``AwsSolutions-IAM5[Resource::*]``),
not by the statement, and an acknowledgment covers the construct it is given on and everything
under it. So a statement on Resource "*" is never put in a role's default policy: ``star_policy``
gives it a policy of its own that carries its own acknowledgment and reason. No role acknowledges
``Resource::*``, so a new ``role.add_to_policy(... resources=["*"])`` fails the synth.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, App, Stack, Validations
from aws_cdk import aws_iam as iam
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct

PLUGIN = "AwsSolutions"
STAR_FINDING = "AwsSolutions-IAM5[Resource::*]"


def register(app: App) -> None:
    Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))


def acknowledge(scope: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge one finding (e.g. ``AwsSolutions-S1``) on ``scope`` and everything under it."""
    if len(reason) < 20:
        raise ValueError(f"acknowledgment of {rule_id} needs a real reason")
    Validations.of(scope).acknowledge(Acknowledgment(id=f"{PLUGIN}::{rule_id}", reason=reason))


def acknowledge_wildcard_resource(scope: IConstruct, resource: str, reason: str) -> None:
    """Acknowledge ``AwsSolutions-IAM5[Resource::...]`` for one resource ARN (tokens allowed)."""
    acknowledge(scope, f"AwsSolutions-IAM5[Resource::{nag_format(scope, resource)}]", reason)


def star_policy(role: iam.Role, statement: iam.PolicyStatement, reason: str) -> iam.Policy:
    """Attach ``statement`` (Resource "*", a Sid) to ``role`` as a policy of its own, under the role
    (whatever depends on the role waits for it), with the ``Resource::*`` acknowledgment on it alone."""
    if statement.resources != ["*"] or not statement.sid:
        raise ValueError(f"star_policy takes one statement with a Sid on Resource '*', got {statement.to_json()}")
    policy = iam.Policy(role, f"{statement.sid}Policy", statements=[statement])
    role.attach_inline_policy(policy)
    acknowledge(policy, STAR_FINDING, reason)
    return policy


def nag_format(scope: IConstruct, value: str) -> str:
    """Render a string with CDK tokens the way cdk-nag names it in findings:
    ``{"Ref": "AWS::Region"}`` -> ``<AWS::Region>``, ``{"Fn::GetAtt": [X, "Arn"]}`` -> ``<X.Arn>``."""
    return _render(Stack.of(scope).resolve(value))


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(_render(part) for part in parts)
    if isinstance(value, dict) and "Ref" in value:
        return f"<{value['Ref']}>"
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        resource, attribute = value["Fn::GetAtt"]
        return f"<{resource}.{attribute}>"
    raise ValueError(f"cannot render {value!r} as cdk-nag does")
