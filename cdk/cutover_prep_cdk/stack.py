"""The Cutover Prep stack: composes storage, workers, orchestration, triggers and the dashboard; nothing else."""

from __future__ import annotations

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from .catalogue import REAPER_FUNCTION, TRIGGER_FUNCTION, TRIGGERED_WORKFLOW, WORKFLOWS, live_metrics
from .comparison import Comparison
from .config import Config
from .dashboard import Dashboard
from .gate import Gate
from .notifications import Notifications
from .orchestration import Orchestration
from .storage import Storage
from .triggers import Triggers
from .workers import Workers


class CutoverPrepStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: Config, **kwargs) -> None:
        super().__init__(scope, construct_id, **kwargs)

        self.storage = Storage(self, "Storage", evidence_retention_days=config.evidence_retention_days)
        self.workers = Workers(self, "Workers", config=config, storage=self.storage)
        self.orchestration = Orchestration(
            self,
            "Orchestration",
            config=config,
            storage=self.storage,
            functions=self.workers.functions,
            workflow=WORKFLOWS[TRIGGERED_WORKFLOW],
        )

        self.triggers = Triggers(
            self,
            "Triggers",
            function=self.workers.functions[TRIGGER_FUNCTION],
            role=self.workers.roles[TRIGGER_FUNCTION],
            state_machine=self.orchestration.state_machine,
            sweep=config.restore_sweep,
            lookback_hours=config.restore_lookback_hours,
        ) if config.restore_trigger else None

        # The second workflow: a child run per configuration, then cleanup; the hourly reaper.
        compare = WORKFLOWS["compare"]
        self.comparison = Comparison(
            self,
            "Comparison",
            config=config,
            storage=self.storage,
            functions=self.workers.functions,
            workflow=compare,
            children={TRIGGERED_WORKFLOW: (self.orchestration.state_machine, config.state_machine_name)},
            reaper=self.workers.functions[REAPER_FUNCTION],
            reaper_role=self.workers.roles[REAPER_FUNCTION],
        )

        # The third workflow: wait until the cutover gate opens (issue 36 §2).
        gate = WORKFLOWS["gate"]
        self.gate = Gate(self, "Gate", config=config, functions=self.workers.functions, workflow=gate)
        CfnOutput(self, gate.output_name, value=self.gate.state_machine.state_machine_arn,
                  description="Wait for 'switch now?': aws stepfunctions start-execution --state-machine-arn ... "
                  "(docs/gate.md)")

        self.dashboard = Dashboard(self, "LiveView", target=config.dashboard_target)

        self.notifications = (Notifications(self, "Notifications", emails=config.notify_emails)
                              if config.notifications else None)

        # Plain outputs, no exports: the CLI and docs/deploy.md read them by these names. The
        # workflow's output has its catalogue name; its older names stay for one release.
        workflow = WORKFLOWS[TRIGGERED_WORKFLOW]
        CfnOutput(
            self,
            workflow.output_name,
            value=self.orchestration.state_machine.state_machine_arn,
            description="Start a run: aws stepfunctions start-execution --state-machine-arn ...",
        )
        for legacy in workflow.legacy_output_names:
            CfnOutput(
                self,
                legacy,
                value=self.orchestration.state_machine.state_machine_arn,
                description=f"Deprecated: the same as {workflow.output_name}; removed in the next release",
            )
        CfnOutput(
            self,
            compare.output_name,
            value=self.comparison.state_machine.state_machine_arn,
            description="Start a comparison: cutover-prep compare --input FILE",
        )
        CfnOutput(
            self,
            "EvidenceBucketName",
            value=self.storage.bucket.bucket_name,
            description="Evidence of each run under runs/<run_id>/",
        )
        CfnOutput(
            self,
            "TableName",
            value=self.storage.table.table_name,
            description="Runs and work units; index by_target lists the runs of one DB instance",
        )
        CfnOutput(
            self,
            live_metrics.DASHBOARD_OUTPUT,
            value=self.dashboard.url,
            description="The live view of a run: choose the run and the DB instance in the dashboard's variables",
        )
        if self.notifications is not None:
            CfnOutput(
                self,
                "NotificationTopicArn",
                value=self.notifications.topic.topic_arn,
                description="Subscribe to hear of every finished run (verdict, reasons, report)",
            )
        if self.workers.security_group is not None:
            CfnOutput(
                self,
                "FunctionSecurityGroupId",
                value=self.workers.security_group.security_group_id,
                description="Allow this security group in the database's security group",
            )
