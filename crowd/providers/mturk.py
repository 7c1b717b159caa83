"""Amazon Mechanical Turk as a crowd provider: a HIT type per batch, one HIT per unit with
MaxAssignments = K, ExternalQuestion pointing at our annotator page, sync, review, bonuses, blocks.

AWS documents that MTurk closed on 2026-09-30; this is written against boto3's ``mturk`` service
model (and tested with botocore's Stubber, which validates every call against it).
"""

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Self

from django.utils import timezone

from annotation.models import Annotator
from core.errors import UserError
from crowd.models import (
    CrowdAssignment,
    CrowdAssignmentStatus,
    CrowdBatch,
    CrowdBonus,
    CrowdProvider,
    CrowdTask,
    CrowdTaskStatus,
)

from . import mturk_client
from .base import Blocking, Provider, SyncReport
from .mturk_client import (
    FEEDBACK_MAX,
    NOTIFY_MAX_WORKERS,
    QUAL_APPROVAL_RATE,
    QUAL_LOCALE,
    QUAL_NUMBER_APPROVED,
    AlreadyDone,
    MTurk,
    MTurkClient,
    MTurkError,
    chunks,
    external_question_xml,
    hit_id_in,
    html_question_xml,
    request_token,
)
from .mturk_settings import annotator_url, mturk_settings
from .mturk_sync import hits_sync

SURCHARGE_ASSIGNMENTS = 10  # HITs with 10 or more assignments pay another 20 % commission


class MTurkProvider(Provider):
    name = CrowdProvider.MTURK
    has_sandbox = True
    blocking = Blocking.ON_PLATFORM
    disposes_tasks = True
    hands_in_on_platform = True
    default_reward = "0.30"

    def __init__(
        self,
        *,
        client: MTurkClient | None = None,
        production: bool = False,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        """``client``: a boto3 mturk client (by default one for the sandbox, or for production)."""
        self._client, self._production, self._sleep = client, production, sleep
        self._api: MTurk | None = None

    @classmethod
    def for_batch(cls, *, batch: CrowdBatch) -> Self:
        return cls(production=batch.production)

    @property
    def api(self) -> MTurk:
        """The requester API, made on first use (production needs the deployment's consent)."""
        if self._api is None:
            client = self._client or mturk_client.client_create(production=self._production)
            self._api = MTurk(client, **({"sleep": self._sleep} if self._sleep else {}))
        return self._api

    # -- rules --------------------------------------------------------------------------------

    def settings_check(self, *, batch: CrowdBatch) -> None:
        mturk_settings(batch)

    def lease_seconds(self, *, batch: CrowdBatch) -> int | None:
        return mturk_settings(batch)["assignment_duration_seconds"]  # the HIT's own deadline

    def fee(self, *, batch: CrowdBatch) -> Decimal:
        # 20 % commission; HITs with 10 or more assignments pay another 20 %.
        return Decimal("0.40") if batch.dataset.annotators_per_item >= SURCHARGE_ASSIGNMENTS else Decimal("0.20")

    def cost_warnings(self, *, batch: CrowdBatch) -> list[str]:
        k = batch.dataset.annotators_per_item
        if k < SURCHARGE_ASSIGNMENTS:
            return []
        return [f"{k} assignments per HIT: 20 % extra commission (split into HITs of 9 or fewer to avoid it)"]

    def batch_warnings(self, *, batch: CrowdBatch) -> list[str]:
        k = batch.dataset.annotators_per_item
        if k < SURCHARGE_ASSIGNMENTS:
            return []
        return [f"{k} assignments per HIT: MTurk charges another 20 % from 10 up"]

    # -- publishing ---------------------------------------------------------------------------

    def publish(self, *, batch: CrowdBatch) -> None:
        config = mturk_settings(batch)
        url = annotator_url()
        if not batch.external_id:
            self._hit_type(batch, config)
        for task in batch.tasks.filter(status=CrowdTaskStatus.PENDING).order_by("pk"):
            self._hit(batch, task, config, url)

    def _hit_type(self, batch: CrowdBatch, config: dict) -> None:
        requirements = [
            {
                "QualificationTypeId": QUAL_APPROVAL_RATE,
                "Comparator": "GreaterThanOrEqualTo",
                "IntegerValues": [config["min_approval_rate"]],
                "ActionsGuarded": "Accept",
            },
            {
                "QualificationTypeId": QUAL_NUMBER_APPROVED,
                "Comparator": "GreaterThanOrEqualTo",
                "IntegerValues": [config["min_approved"]],
                "ActionsGuarded": "Accept",
            },
        ]
        if config["locales"]:
            requirements.append(
                {
                    "QualificationTypeId": QUAL_LOCALE,
                    "Comparator": "In",
                    "LocaleValues": [{"Country": c} for c in config["locales"]],
                    "ActionsGuarded": "Accept",
                }
            )
        if config["block"] == "soft":
            requirements.append(
                {
                    "QualificationTypeId": self._soft_block_type(batch),
                    "Comparator": "DoesNotExist",
                    "ActionsGuarded": "DiscoverPreviewAndAccept",
                }
            )
        answer = self.api.call(
            "create_hit_type",
            AutoApprovalDelayInSeconds=config["auto_approval_delay_seconds"],
            AssignmentDurationInSeconds=config["assignment_duration_seconds"],
            Reward=config["reward"],
            Title=config["title"],
            Keywords=config["keywords"],
            Description=config["description"],
            QualificationRequirements=requirements,
        )
        batch.external_id = answer["HITTypeId"]
        batch.save(update_fields=["external_id"])

    def _soft_block_type(self, batch: CrowdBatch) -> str:
        """The qualification type whose holders may not see this project's HITs (made once)."""
        known = (batch.settings or {}).get("soft_block_qualification_type_id")
        if known:
            return known
        name = f"WellChosen soft block {batch.dataset.name}"[:100]
        try:
            answer = self.api.call(
                "create_qualification_type",
                Name=name,
                Keywords="wellchosen,block",
                Description="Workers with this qualification do not see WellChosen HITs of this dataset.",
                QualificationTypeStatus="Active",
            )
            type_id = answer["QualificationType"]["QualificationTypeId"]
        except MTurkError as exc:
            if "already" not in exc.message.lower():
                raise
            found = [
                q
                for q in self.api.paginate(
                    "list_qualification_types",
                    "QualificationTypes",
                    Query=name,
                    MustBeRequestable=False,
                    MustBeOwnedByCaller=True,
                )
                if q.get("Name") == name
            ]
            if not found:
                raise
            type_id = found[0]["QualificationTypeId"]
        batch.settings = {**(batch.settings or {}), "soft_block_qualification_type_id": type_id}
        batch.save(update_fields=["settings"])
        return type_id

    def _hit(self, batch: CrowdBatch, task: CrowdTask, config: dict, url: str) -> None:
        build = external_question_xml if config["question"] == "external" else html_question_xml
        try:
            hit = self.api.call(
                "create_hit_with_hit_type",
                HITTypeId=batch.external_id,
                MaxAssignments=task.max_assignments,
                LifetimeInSeconds=config["lifetime_seconds"],
                Question=build(url=url, frame_height=config["frame_height"]),
                RequesterAnnotation=task.token,
                UniqueRequestToken=request_token("hit", task.token),
            )["HIT"]
        except AlreadyDone as exc:
            hit = self._find_hit(task, exc.message)
        CrowdTask.objects.filter(pk=task.pk, status=CrowdTaskStatus.PENDING).update(
            external_id=hit["HITId"],
            status=CrowdTaskStatus.PUBLISHED,
            published_at=timezone.now(),
            expires_at=hit.get("Expiration"),
        )

    def _find_hit(self, task: CrowdTask, message: str) -> dict:
        """The HIT an earlier call with the same token created (its id is in the error; else by
        our annotation)."""
        hit_id = hit_id_in(message)
        if hit_id:
            return self.api.call("get_hit", HITId=hit_id)["HIT"]
        for hit in self.api.paginate("list_hits", "HITs"):
            if hit.get("RequesterAnnotation") == task.token:
                return hit
        raise UserError(f"MTurk says task {task.pk} exists but no HIT carries its annotation {task.token}")

    # -- importing work -----------------------------------------------------------------------

    def sync(self, *, batch: CrowdBatch) -> SyncReport:
        return hits_sync(api=self.api, batch=batch)

    # -- review and money ---------------------------------------------------------------------

    def approve(self, *, crowd_assignment: CrowdAssignment, feedback: str, override_rejection: bool = False) -> None:
        params = {"AssignmentId": crowd_assignment.external_id}
        if feedback:
            params["RequesterFeedback"] = feedback[:FEEDBACK_MAX]
        if override_rejection:
            params["OverrideRejection"] = True
        self._review("approve_assignment", params, "Approved")

    def reject(self, *, crowd_assignment: CrowdAssignment, feedback: str) -> None:
        params = {"AssignmentId": crowd_assignment.external_id, "RequesterFeedback": feedback[:FEEDBACK_MAX]}
        self._review("reject_assignment", params, "Rejected")

    def _review(self, operation: str, params: dict, wanted: str) -> None:
        try:
            self.api.call(operation, **params)
        except MTurkError:
            # A retry after a lost answer: the first call may have gone through.
            current = self.api.call("get_assignment", AssignmentId=params["AssignmentId"])
            if current["Assignment"]["AssignmentStatus"] != wanted:
                raise

    def bonus(self, *, bonus: CrowdBonus) -> None:
        ca = bonus.crowd_assignment
        try:
            self.api.call(
                "send_bonus",
                WorkerId=ca.worker.external_id,
                BonusAmount=f"{bonus.amount:.2f}",
                AssignmentId=ca.external_id,
                Reason=bonus.reason,
                UniqueRequestToken=bonus.token,
            )
        except AlreadyDone:
            paid = self.api.paginate("list_bonus_payments", "BonusPayments", AssignmentId=ca.external_id)
            if not any(Decimal(p["BonusAmount"]) == bonus.amount for p in paid):
                raise

    def block(self, *, worker: Annotator, reason: str, batch: CrowdBatch | None = None) -> None:
        if batch is not None and mturk_settings(batch)["block"] == "soft":
            self.api.call(
                "associate_qualification_with_worker",
                QualificationTypeId=self._soft_block_type(batch),
                WorkerId=worker.external_id,
                IntegerValue=1,
                SendNotification=False,
            )
        else:
            self.api.call("create_worker_block", WorkerId=worker.external_id, Reason=reason)

    def unblock(self, *, worker: Annotator, reason: str, batch: CrowdBatch | None = None) -> None:
        if batch is not None and mturk_settings(batch)["block"] == "soft":
            self.api.call(
                "disassociate_qualification_from_worker",
                WorkerId=worker.external_id,
                QualificationTypeId=self._soft_block_type(batch),
                Reason=reason,
            )
        else:
            self.api.call("delete_worker_block", WorkerId=worker.external_id, Reason=reason)

    def expire(self, *, batch: CrowdBatch) -> None:
        for task in batch.tasks.filter(status=CrowdTaskStatus.PUBLISHED).exclude(external_id=""):
            self.api.call(
                "update_expiration_for_hit", HITId=task.external_id, ExpireAt=datetime(2015, 1, 1, tzinfo=UTC)
            )
            CrowdTask.objects.filter(pk=task.pk).update(status=CrowdTaskStatus.EXPIRED, expires_at=timezone.now())

    def dispose(self, *, batch: CrowdBatch) -> int:
        """DeleteHIT for expired HITs whose every assignment has been reviewed; returns how many."""
        deleted = 0
        for task in batch.tasks.filter(status=CrowdTaskStatus.EXPIRED).exclude(external_id=""):
            hit = self.api.call("get_hit", HITId=task.external_id)["HIT"]
            if hit.get("HITStatus") != "Reviewable" or hit.get("NumberOfAssignmentsPending", 0):
                continue
            if task.assignments.filter(status=CrowdAssignmentStatus.SUBMITTED).exists():
                continue
            self.api.call("delete_hit", HITId=task.external_id)
            CrowdTask.objects.filter(pk=task.pk).update(status=CrowdTaskStatus.DELETED)
            deleted += 1
        return deleted

    def balance(self, *, batch: CrowdBatch) -> str | None:
        return self.api.call("get_account_balance").get("AvailableBalance")

    def notify(self, *, batch: CrowdBatch, worker_ids: list[str], subject: str, message: str) -> int:
        failed = 0
        for group in chunks(sorted(set(worker_ids)), NOTIFY_MAX_WORKERS):
            answer = self.api.call("notify_workers", Subject=subject[:200], MessageText=message[:4096], WorkerIds=group)
            failed += len(answer.get("NotifyWorkersFailureStatuses", []))
        return failed
