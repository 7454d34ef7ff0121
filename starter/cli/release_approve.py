"""``custody release approve RELEASE_ID``: the second person of the two-person rule.

Acts as the identity ``CUSTODY_OPERATOR_CREDENTIAL`` names (a
``release_approval`` decision, role ``releaser``), signs the approval with that
identity's own key and delivers it to the held release
(``starter.client.release.approve``). A refusal raises ``IdentityRefused``
with its code, which the CLI answers with exit 12 (``Exit.DENIED``).
"""

from __future__ import annotations

import argparse

from custody import egress as eg
from custody.errors import UsageError
from custody.operators import DecisionKind, acting
from custody.settings import Settings
from starter.cli.output import Exit, emit


async def approve_command(args: argparse.Namespace, release_id: str, settings: Settings) -> int:
    from starter.client.connect import CustodyClient
    from starter.client.release import approve

    try:
        rid = eg.check_release_id(release_id)
    except ValueError as err:
        raise UsageError(detail=str(err)) from None
    try:
        client = await CustodyClient.connect(settings)
    except RuntimeError as err:  # the SDK's connection failure
        raise ConnectionError(f"cannot reach Temporal at {settings.temporal_address}") from err
    person = acting(settings, client.store, DecisionKind.RELEASE_APPROVAL)
    answer = await approve(client, person, rid, args.tenant)
    data = answer.model_dump(mode="json")
    emit(args, data, f"release {rid} approved by {answer.approved_by}: it goes on")
    return Exit.OK
