"""The release workflow as the build before ``release-step-models`` (and ``release-fairness``)
ran it.

Same name, same commands; it sends the nested v1 inputs and records no patch
marker, as the code before the patch did. A module of its own, importing only
what the workflow sandbox passes through (as ``workers.versioning`` does), so a
worker can run it beside the stand-ins to start a release that a worker with
today's code then finishes.
"""

from __future__ import annotations

from temporalio import workflow

from workflows.release import ReleaseWorkflow

with workflow.unsafe.imports_passed_through():
    from custody.egress import RELEASE_WORKFLOW_NAME, ReleaseInput, ReleaseResult


@workflow.defn(name=RELEASE_WORKFLOW_NAME)
class ReleaseBeforeStepModels(ReleaseWorkflow):
    @workflow.run
    async def run(self, inp: ReleaseInput) -> ReleaseResult:
        return await super().run(inp)

    def _step_models(self) -> bool:
        return False

    def _fairness(self) -> bool:
        return False  # nor did it carry the tenant's fairness key (``release-fairness``)
