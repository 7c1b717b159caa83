"""Crowd batches in the admin: plan (cost) and publish, sync, review with suggested feedback,
bonuses, expiry. Publishing and syncing run as background jobs."""

from decimal import Decimal

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from core.admin.helpers import CheckedInputAdmin, ReadOnlyAdmin, permission_required_page, render_form, start_job
from core.errors import UserError
from core.services.jobs import job_create
from core.services.uploads import upload_store
from crowd.job_params import CrowdPublishParams, CrowdSyncParams
from crowd.models import CrowdAssignment, CrowdBatch, CrowdBonus, CrowdTask
from crowd.providers.link import link_url
from crowd.providers.registry import provider_for
from crowd.selectors import crowd_balance, crowd_batch_status, crowd_cost_estimate, crowd_review_suggestions
from crowd.services.batches import crowd_batch_create, crowd_batch_dispose, crowd_batch_expire, crowd_batch_update
from crowd.services.review import crowd_assignment_review, crowd_bonus_send, crowd_workers_notify, link_approvals_import
from crowd.services.workers import crowd_worker_block, crowd_worker_unblock


class PublishForm(forms.Form):
    confirm_production = forms.BooleanField(required=False, label="I confirm: this is production and spends real money")


class BonusForm(forms.Form):
    amount = forms.DecimalField(min_value=Decimal("0.01"), max_digits=8, decimal_places=2, help_text="dollars")
    reason = forms.CharField(max_length=1024, widget=forms.Textarea, help_text="The worker sees this")
    purpose = forms.SlugField(max_length=40, initial="bonus", help_text="One bonus per assignment and purpose")


class NotifyForm(forms.Form):
    subject = forms.CharField(max_length=200)
    message = forms.CharField(max_length=4096, widget=forms.Textarea)


class ApprovalsForm(forms.Form):
    file = forms.FileField(help_text="CSV from the platform: worker_id (or Participant id), status, feedback?")


class CrowdBatchForm(forms.ModelForm):
    """Adding or changing a batch goes through crowd_batch_create / crowd_batch_update, which own
    every rule of a batch: once the model's own checks pass, the form calls the service and shows
    its refusal. The batch is saved by then (CrowdBatchAdmin.save_model has nothing left to do)."""

    class Meta:
        model = CrowdBatch
        fields = "__all__"

    def _post_clean(self):
        super()._post_clean()  # the fields into the instance, the model's checks and constraints
        if self.errors:
            return
        values = {f: getattr(self.instance, f) for f in ("provider", "name", "settings", "max_units", "production")}
        try:
            if self.instance.pk is None:
                self.instance = crowd_batch_create(dataset=self.instance.dataset, **values)
            else:
                stored = CrowdBatch.objects.get(pk=self.instance.pk)
                self.instance = crowd_batch_update(batch=stored, dataset=self.instance.dataset, **values)
        except UserError as exc:
            self.add_error(None, str(exc))


@admin.register(CrowdBatch)
class CrowdBatchAdmin(CheckedInputAdmin):
    form = CrowdBatchForm
    list_display = ["name", "dataset", "provider", "status", "production", "published_at", "synced_at", "links"]
    list_filter = ["provider", "status", "production"]
    readonly_fields = ["status", "external_id", "token", "completion_code", "published_at", "synced_at", "created_at"]
    actions = ["sync_action", "expire_action", "dispose_action", "balance_action"]

    def save_model(self, request, obj, form, change):
        """Saved already: the form went through crowd_batch_create / crowd_batch_update."""

    def get_readonly_fields(self, request, obj=None):
        # Once published, where the money goes (provider, production) no longer changes.
        fixed = ["dataset", "provider", "production"] if obj and obj.status != "draft" else []
        return [*self.readonly_fields, *fixed]

    @admin.display(description="")
    def links(self, obj):
        return format_html(
            '<a href="{}">plan &amp; publish</a> · <a href="{}">review</a> · <a href="{}">message workers</a>',
            reverse("admin:crowd_crowdbatch_plan", args=[obj.pk]),
            reverse("admin:crowd_crowdbatch_review", args=[obj.pk]),
            reverse("admin:crowd_crowdbatch_notify", args=[obj.pk]),
        )

    def get_urls(self):
        def view(page, read: str, write: str = "crowd.change_crowdbatch"):
            return self.admin_site.admin_view(permission_required_page(page, read=read, write=write))

        # Reading a batch's plan and review needs the view permission; publishing, reviewing,
        # importing approvals and messaging workers (money and messages) need the change permission.
        return [
            path("<int:pk>/plan/", view(self.plan_view, "crowd.view_crowdbatch"), name="crowd_crowdbatch_plan"),
            path("<int:pk>/review/", view(self.review_view, "crowd.view_crowdbatch"), name="crowd_crowdbatch_review"),
            path(
                "<int:pk>/approvals/",
                view(self.approvals_view, "crowd.change_crowdbatch"),
                name="crowd_crowdbatch_approvals",
            ),
            path("<int:pk>/notify/", view(self.notify_view, "crowd.change_crowdbatch"), name="crowd_crowdbatch_notify"),
        ] + super().get_urls()

    def plan_view(self, request, pk):
        """Cost estimate, status and warnings; publishing (confirmed for production) starts a job."""
        batch = get_object_or_404(CrowdBatch.objects.select_related("dataset"), pk=pk)
        form = PublishForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            confirmed = form.cleaned_data["confirm_production"]
            if batch.production and not confirmed:
                form.add_error("confirm_production", "Production publishing must be confirmed.")
            else:
                return start_job(request, params=CrowdPublishParams(batch_id=batch.pk, confirm_production=confirmed))
        platform = provider_for(batch=batch)
        # The balance is a call to the platform: asked for with a link on the page, not on every view.
        balance, balance_error = None, ""
        if request.method == "GET" and request.GET.get("balance"):
            try:
                balance = crowd_balance(batch=batch) or "not available"
            except UserError as exc:
                balance_error = str(exc)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Plan and publish {batch.name}",
            "balance": balance,
            "balance_error": balance_error,
            "batch": batch,
            "estimate": crowd_cost_estimate(batch=batch),
            "status": crowd_batch_status(batch=batch),
            "link": link_url(batch=batch) if platform.shows_link and batch.status != "draft" else "",
            "has_sandbox": platform.has_sandbox,
            "form": form,
            "production_off": batch.production and not settings.WELLCHOSEN_MTURK_ALLOW_PRODUCTION,
        }
        return TemplateResponse(request, "admin/wellchosen/crowd_plan.html", context)

    def review_view(self, request, pk):
        """Submissions awaiting review with the suggested decision and feedback; apply them."""
        batch = get_object_or_404(CrowdBatch, pk=pk)
        suggestions = crowd_review_suggestions(batch=batch)
        if request.method == "POST":
            chosen = set(request.POST.getlist("assignment"))
            done = 0
            for suggestion in suggestions:
                ca = suggestion["crowd_assignment"]
                if str(ca.pk) not in chosen:
                    continue
                decision = request.POST.get(f"decision-{ca.pk}", "approve" if suggestion["approve"] else "reject")
                feedback = request.POST.get(f"feedback-{ca.pk}", suggestion["feedback"])
                try:
                    crowd_assignment_review(crowd_assignment=ca, approve=decision == "approve", feedback=feedback)
                    done += 1
                except UserError as exc:
                    messages.error(request, f"{ca}: {exc}")
            messages.success(request, f"{done} submission(s) reviewed.")
            return redirect("admin:crowd_crowdbatch_review", pk=batch.pk)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Review {batch.name}",
            "batch": batch,
            "suggestions": suggestions,
        }
        return TemplateResponse(request, "admin/wellchosen/crowd_review.html", context)

    def notify_view(self, request, pk):
        batch = get_object_or_404(CrowdBatch, pk=pk)
        form = NotifyForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                sent = crowd_workers_notify(batch=batch, **form.cleaned_data)
            except UserError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Message sent to {sent['workers']} worker(s), {sent['failed']} failed.")
                return redirect("admin:crowd_crowdbatch_plan", pk=batch.pk)
        return render_form(request, self, form=form, title=f"Message the workers of {batch.name}")

    def approvals_view(self, request, pk):
        batch = get_object_or_404(CrowdBatch, pk=pk)
        form = ApprovalsForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            try:
                counts = link_approvals_import(batch=batch, path=upload_store(uploaded=form.cleaned_data["file"]))
            except UserError as exc:
                form.add_error("file", str(exc))
            else:
                text = (
                    f"Approvals imported: {counts['approved']} approved, {counts['rejected']} rejected, "
                    f"{counts['unchanged']} unchanged."
                )
                if counts["discarded"]:
                    text += (
                        f" {counts['discarded']} were discarded already: nobody approved them within the "
                        "batch's confirm_within_hours."
                    )
                messages.success(request, text)
                return redirect("admin:crowd_crowdbatch_review", pk=batch.pk)
        return render_form(request, self, form=form, title=f"Import approvals for {batch.name}")

    @admin.action(description="Sync submitted work (background job)", permissions=["change"])
    def sync_action(self, request, queryset):
        for batch in queryset:
            job_create(params=CrowdSyncParams(batch_id=batch.pk), created_by=request.user)
        self.message_user(request, f"Sync started for {queryset.count()} batch(es); see Jobs.")

    @admin.action(description="Expire (no new workers can start)", permissions=["change"])
    def expire_action(self, request, queryset):
        for batch in queryset:
            try:
                crowd_batch_expire(batch=batch)
            except UserError as exc:
                self.message_user(request, f"{batch}: {exc}", level=messages.ERROR)

    @admin.action(description="Delete finished HITs (expired, reviewed; MTurk)", permissions=["change"])
    def dispose_action(self, request, queryset):
        for batch in queryset:
            try:
                deleted = crowd_batch_dispose(batch=batch)
            except UserError as exc:
                self.message_user(request, f"{batch}: {exc}", level=messages.ERROR)
                continue
            if deleted is not None:  # None: a platform that keeps no tasks to delete
                self.message_user(request, f"{batch}: {deleted} HIT(s) deleted.")

    @admin.action(description="Show the requester account balance")
    def balance_action(self, request, queryset):
        for batch in queryset:
            try:
                balance = crowd_balance(batch=batch)
            except UserError as exc:
                self.message_user(request, f"{batch}: {exc}", level=messages.ERROR)
            else:
                where = "production" if batch.production else "sandbox"
                self.message_user(request, f"{batch} ({where}): balance {balance or 'not available'}")


@admin.register(CrowdTask)
class CrowdTaskAdmin(ReadOnlyAdmin):
    list_display = ["id", "batch", "question_id", "external_id", "status", "max_assignments", "published_at"]
    list_filter = ["status", "provider"]
    list_select_related = ["batch"]
    search_fields = ["external_id", "token"]


@admin.register(CrowdAssignment)
class CrowdAssignmentAdmin(ReadOnlyAdmin):
    list_display = ["external_id", "batch", "worker", "status", "external_status", "submitted_at", "auto_approval_at"]
    list_filter = ["status", "provider", "batch"]
    list_select_related = ["batch", "worker"]
    search_fields = ["external_id", "worker__external_id"]
    actions = ["bonus_action", "block_action", "unblock_action"]

    def has_bonus_permission(self, request) -> bool:
        return request.user.has_perm("crowd.add_crowdbonus")

    def has_block_permission(self, request) -> bool:
        return request.user.has_perm("annotation.change_annotator")

    @admin.action(description="Block these workers (here and on the platform)", permissions=["block"])
    def block_action(self, request, queryset):
        self._block(request, queryset, block=True)

    @admin.action(description="Unblock these workers (here and on the platform)", permissions=["block"])
    def unblock_action(self, request, queryset):
        self._block(request, queryset, block=False)

    def _block(self, request, queryset, *, block: bool) -> None:
        done = set()
        for ca in queryset.select_related("batch", "worker"):
            if ca.worker_id in done:
                continue
            done.add(ca.worker_id)
            service = crowd_worker_block if block else crowd_worker_unblock
            reason = "quality control" if block else "unblocked by the researcher"
            try:
                service(worker=ca.worker, reason=reason, batch=ca.batch)
            except UserError as exc:
                self.message_user(request, f"{ca.worker}: {exc}", level=messages.ERROR)
        self.message_user(request, f"{len(done)} worker(s) {'blocked' if block else 'unblocked'}.")

    def get_urls(self):
        view = self.admin_site.admin_view(permission_required_page(self.bonus_view, read="crowd.add_crowdbonus"))
        return [path("<int:pk>/bonus/", view, name="crowd_crowdassignment_bonus"), *super().get_urls()]

    @admin.action(description="Pay a bonus (one assignment)", permissions=["bonus"])
    def bonus_action(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Choose exactly one assignment for a bonus.", level=messages.ERROR)
            return None
        return redirect("admin:crowd_crowdassignment_bonus", pk=queryset.get().pk)

    def bonus_view(self, request, pk):
        ca = get_object_or_404(CrowdAssignment.objects.select_related("batch", "worker"), pk=pk)
        form = BonusForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                bonus = crowd_bonus_send(crowd_assignment=ca, **form.cleaned_data)
            except UserError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Bonus of ${bonus.amount} {bonus.status} for {ca}.")
                return redirect("admin:crowd_crowdassignment_changelist")
        return render_form(request, self, form=form, title=f"Bonus for {ca} (worker {ca.worker.external_id})")


@admin.register(CrowdBonus)
class CrowdBonusAdmin(ReadOnlyAdmin):
    list_display = ["crowd_assignment", "purpose", "amount", "status", "token", "paid_at"]
    list_filter = ["status"]
