"""cdk-nag wiring: the AwsSolutions pack as a validation plugin of the app, and acknowledgments that say why.

cdk-nag v3 runs as a CDK policy-validation plugin: any finding not acknowledged on its construct interrupts
synthesis with a report, so a synthesized assembly (the CLIs' ``synth``, ``deploy``) is proof of zero
unacknowledged findings. Acknowledgments are per finding (``AwsSolutions-IAM5[Resource::...]``), never
per rule, and each carries its reason.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from aws_cdk import Acknowledgment, App, Validations
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct

__all__ = ["apply_nag", "suppress"]

logger = logging.getLogger(__name__)


def apply_nag(app: App) -> None:
    """Run ``AwsSolutionsChecks`` over every stack of ``app`` at synth time.

    Args:
        app: The app (plugins can only be registered on an App or Stage).
    """
    Validations.of(app).add_plugins(
        AwsSolutionsChecks(app, verbose=True, write_suppressions_to_cloud_formation=True)
    )
    logger.debug("app=<%s> | cdk-nag AwsSolutions checks registered", app.node.path or "app")


def suppress(
    construct: IConstruct, rule: str, reason: str, *, applies_to: Sequence[str] | None = None
) -> None:
    """Acknowledge cdk-nag findings on one construct (and its children), with the reason.

    Args:
        construct: The resource, or an L2 whose ``Resource`` child carries the finding.
        rule: The rule id, e.g. ``AwsSolutions-IAM5``.
        reason: Why the finding does not apply; at least a sentence.
        applies_to: For rules with one finding per ARN or action, the findings acknowledged
            (``Resource::arn:...``); each becomes ``rule[finding]``.

    Raises:
        ValueError: the reason is too short to explain anything.
    """
    if len(reason.strip()) < 20:
        raise ValueError(f"acknowledging {rule} needs a real reason, got {reason!r}")
    ids = [f"{rule}[{finding}]" for finding in applies_to] if applies_to else [rule]
    Validations.of(construct).acknowledge(*(Acknowledgment(id=rule_id, reason=reason) for rule_id in ids))
