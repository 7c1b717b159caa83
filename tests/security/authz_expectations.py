"""Who may open each URL: one entry per URL pattern (admin model pages: one per model), read by
tests/security/test_authz_matrix.py. A new URL pattern fails the matrix until it has an entry here.

Roles (tests/security/authz_world.py): anonymous; annotator_a and annotator_b (internal annotators
of two different datasets); user (signed in, neither annotator nor staff); staff (is_staff and no
permission at all); viewer (is_staff with every view_* permission); researcher (staff and superuser,
as the demo makes the researcher).

Outcomes: OK (2xx), REDIRECT (3xx elsewhere than a login page), LOGIN (3xx to a login page),
BAD (400: allowed, the empty form is refused with a message), FORBIDDEN (403), NOT_FOUND (404),
NOT_ALLOWED (405). An entry maps each role to an outcome, or to a set of outcomes where either is
right (an empty form that is either refused or saved)."""

from dataclasses import dataclass

from tests.security.authz_world import ROLES

OK, REDIRECT, LOGIN, BAD = "ok", "redirect", "login", "400"
FORBIDDEN, NOT_FOUND, NOT_ALLOWED = "403", "404", "405"
DENIED = frozenset({LOGIN, FORBIDDEN, NOT_FOUND, NOT_ALLOWED})
SAVED_OR_REFUSED = frozenset({OK, REDIRECT})  # an empty admin form: shown again with errors, or saved

NON_STAFF = ("anonymous", "annotator_a", "annotator_b", "user")
ANNOTATORS = ("annotator_a", "annotator_b")


@dataclass(frozen=True)
class Expect:
    get: dict
    post: dict


def everyone(outcome) -> dict:
    return dict.fromkeys(ROLES, outcome)


def roles(default, **outcomes) -> dict:
    assert set(outcomes) <= set(ROLES), set(outcomes) - set(ROLES)
    return {role: outcomes.get(role, default) for role in ROLES}


def staff_only(staff, viewer=None, researcher=None) -> dict:
    """Signed-out and non-staff users are sent to the (admin) login page."""
    return roles(
        LOGIN,
        staff=staff,
        viewer=staff if viewer is None else viewer,
        researcher=staff if researcher is None else researcher,
    )


def same(outcomes: dict) -> Expect:
    """The view does not tell methods apart (a POST is read like a GET)."""
    return Expect(get=outcomes, post=outcomes)


def staff_page() -> Expect:
    """A staff page that needs a view permission (the viewer has it, staff without permissions do not)."""
    return same(staff_only(FORBIDDEN, viewer=OK, researcher=OK))


def staff_action() -> Expect:
    """A staff page that only takes a POST (require_POST, checked after the add or change permission it
    needs) and redirects back."""
    return Expect(
        get=staff_only(FORBIDDEN, researcher=NOT_ALLOWED),
        post=staff_only(FORBIDDEN, researcher=REDIRECT),
    )


def permission_page(*, read: str, write: str | None = None) -> Expect:
    """A custom admin page that checks a model permission: ``read`` is who may GET it, ``write`` who may
    POST to it ("viewer": the view permission is enough; "researcher": it needs add or change)."""
    write = write or read

    def table(who: str, allowed) -> dict:
        return staff_only(FORBIDDEN, viewer=allowed if who == "viewer" else FORBIDDEN, researcher=allowed)

    return Expect(get=table(read, OK), post=table(write, SAVED_OR_REFUSED))


# The pages of our own apps, the login pages and the admin site's own pages.
EXPECTATIONS: dict[str, Expect] = {
    # -- accounts
    "login": same(everyone(OK)),  # an empty form is shown again (200)
    "logout": Expect(get=everyone(NOT_ALLOWED), post=everyone(LOGIN)),
    # -- annotation: annotator pages
    "home": same(roles(OK, anonymous=LOGIN)),
    "annotate-next": same(roles(FORBIDDEN, anonymous=LOGIN, annotator_a=OK, annotator_b=OK)),
    # the start page's choice of dataset: an empty choice is refused (400)
    "annotate-choose": Expect(
        get=roles(
            FORBIDDEN,
            anonymous=LOGIN,
            annotator_a=NOT_ALLOWED,
            annotator_b=NOT_ALLOWED,
            user=NOT_ALLOWED,
            staff=NOT_ALLOWED,
            viewer=NOT_ALLOWED,
            researcher=NOT_ALLOWED,
        ),
        post=roles(FORBIDDEN, anonymous=LOGIN, annotator_a=BAD, annotator_b=BAD),
    ),
    "annotate-pause": same(roles(FORBIDDEN, anonymous=LOGIN, annotator_a=OK, annotator_b=OK)),
    # annotator A's own unit: B gets a 404 (it is not theirs), accounts without an annotator a 403
    "annotate-unit": Expect(
        get=roles(FORBIDDEN, anonymous=LOGIN, annotator_a=OK, annotator_b=NOT_FOUND),
        post=roles(FORBIDDEN, anonymous=LOGIN, annotator_a=BAD, annotator_b=NOT_FOUND),
    ),
    # correcting annotator A's unit: the same as the unit (A's unit is leased, not submitted: a message)
    "annotate-correct": Expect(
        get=roles(FORBIDDEN, anonymous=LOGIN, annotator_a=OK, annotator_b=NOT_FOUND),
        post=roles(FORBIDDEN, anonymous=LOGIN, annotator_a=BAD, annotator_b=NOT_FOUND),
    ),
    # the invitation link is the capability: anyone holding it may sign up (an empty form: 400)
    "invite-accept": Expect(get=everyone(OK), post=everyone(BAD)),
    # -- annotation: the researcher dashboard (permissions in docs/deployment.md)
    "dashboard": staff_page(),
    "dashboard-dataset": staff_page(),
    "dashboard-refresh": staff_action(),
    "dashboard-open": staff_action(),
    # an empty invitation is refused with the dashboard and its message (400)
    "dashboard-invite": Expect(get=staff_action().get, post=staff_only(FORBIDDEN, researcher=BAD)),
    "dashboard-block": staff_action(),
    "dashboard-invitation-revoke": staff_action(),
    # -- retrieval: the pool review page (the view_question permission)
    "pool-review": staff_page(),
    # adding nobody is refused with the dashboard and its message (400); removing is idempotent
    "dashboard-members-add": Expect(get=staff_action().get, post=staff_only(FORBIDDEN, researcher=BAD)),
    "dashboard-members-remove": staff_action(),
    # -- evaluation: campaign reports
    "campaign-list": staff_page(),
    # creating a campaign needs the add permission; an empty form is refused (400)
    "campaign-new": Expect(get=staff_only(FORBIDDEN, researcher=OK), post=staff_only(FORBIDDEN, researcher=BAD)),
    "campaign-report": staff_page(),
    "campaign-report-json": staff_page(),
    "campaign-recompute": staff_action(),
    # -- pairs: the researcher's review of contrastive pairs (an empty decision is refused: 400)
    "pairs": staff_page(),
    "pairs-review": staff_page(),
    "pairs-review-submit": Expect(
        get=staff_only(FORBIDDEN, researcher=NOT_ALLOWED), post=staff_only(FORBIDDEN, researcher=BAD)
    ),
    # -- core: jobs and the health check
    "healthz": same(everyone(OK)),
    "favicon": same(everyone(REDIRECT)),
    "job-list": staff_page(),
    "job-detail": staff_page(),
    "job-status-json": staff_page(),
    "job-cancel": staff_action(),
    "job-retry": staff_action(),  # a job that is not failed: nothing to retry, back to its page
    # -- crowd: no accounts; the HIT (MTurk's preview) and the signed tokens are the capability
    "crowd-mturk": Expect(get=everyone(OK), post=everyone(NOT_ALLOWED)),
    "crowd-unit": Expect(get=everyone(OK), post=everyone(BAD)),
    "crowd-link": Expect(get=everyone(REDIRECT), post=everyone(NOT_ALLOWED)),
    # without the session the batch's link starts, nobody gets a unit
    "crowd-link-next": Expect(get=everyone(FORBIDDEN), post=everyone(NOT_ALLOWED)),
    # -- the admin site's own pages
    "admin:index": same(staff_only(OK)),
    "admin:login": Expect(get=roles(OK, staff=REDIRECT, viewer=REDIRECT, researcher=REDIRECT), post=everyone(OK)),
    # Django sends non-staff to the admin index (and from there to its login); staff log out by POST only
    "admin:logout": Expect(
        get=roles(REDIRECT, staff=NOT_ALLOWED, viewer=NOT_ALLOWED, researcher=NOT_ALLOWED),
        post=roles(REDIRECT, staff=LOGIN, viewer=LOGIN, researcher=LOGIN),
    ),
    "admin:password_change": same(staff_only(OK)),
    "admin:password_change_done": Expect(get=staff_only(OK), post=staff_only(NOT_ALLOWED)),
    # without app_label/model_name/field_name the autocomplete refuses (and it only answers GET)
    "admin:autocomplete": Expect(get=staff_only(FORBIDDEN), post=staff_only(NOT_ALLOWED)),
    "admin:jsi18n": Expect(get=staff_only(OK), post=staff_only(NOT_ALLOWED)),
    "admin:view_on_site": same(staff_only(NOT_FOUND)),  # no model of ours has a public page
    "admin:app_list": same(staff_only(NOT_FOUND, viewer=OK, researcher=OK)),
    "admin:(?P<url>.*)$": same(staff_only(NOT_FOUND)),
    # another user's password: who may change users
    "admin:auth_user_password_change": permission_page(read="researcher"),
    # -- custom admin pages: the model permission each needs (Django checks them on its own pages only)
    "admin:annotation_dataset_import_dialogues": permission_page(read="researcher"),
    "admin:annotation_dataset_import_testset": permission_page(read="researcher"),
    "admin:annotation_dataset_preview": permission_page(read="viewer"),
    # an empty build form is refused (400): nothing is queued
    "admin:annotation_dataset_build": Expect(
        get=permission_page(read="researcher").get, post=staff_only(FORBIDDEN, researcher=BAD)
    ),
    "admin:annotation_dataset_pools": permission_page(read="researcher"),
    "admin:annotation_dataset_negatives": permission_page(read="researcher"),
    # starting a shortcut audit needs testsets.add_shortcutaudit (the viewer has view_* only); an empty
    # form is refused with its message (400)
    "admin:annotation_dataset_shortcut-audit": Expect(
        get=permission_page(read="researcher").get, post=staff_only(FORBIDDEN, researcher=BAD)
    ),
    "admin:testsets_testset_audit": Expect(
        get=permission_page(read="researcher").get, post=staff_only(FORBIDDEN, researcher=BAD)
    ),
    "admin:annotation_dataset_pairs": permission_page(read="researcher"),
    "admin:pairs_pairset_import": permission_page(read="researcher"),
    "admin:pairs_pairset_export": permission_page(read="viewer"),
    "admin:annotation_score_import": permission_page(read="researcher"),
    "admin:testsets_testset_download": permission_page(read="viewer"),
    "admin:crowd_crowdbatch_plan": permission_page(read="viewer", write="researcher"),
    "admin:crowd_crowdbatch_review": permission_page(read="viewer", write="researcher"),
    "admin:crowd_crowdbatch_approvals": permission_page(read="researcher"),
    "admin:crowd_crowdbatch_notify": permission_page(read="researcher"),
    "admin:crowd_crowdassignment_bonus": permission_page(read="researcher"),
    "admin:retrieval_repository_import": permission_page(read="researcher"),
    "admin:evaluation_generation_rate": permission_page(read="researcher"),
}

# The standard pages of each registered model (changelist, add, history, delete, change and the
# object_id/ redirect): what the researcher (superuser) may do there beyond viewing it: a(dd),
# c(hange), d(elete). Staff without permissions get 403 everywhere, the viewer may read.
ADMIN_MODELS: dict[str, str] = {
    "auth/group": "acd",
    "auth/user": "acd",
    "core/job": "d",
    "annotation/dataset": "acd",
    "annotation/context": "d",
    "annotation/question": "d",
    "annotation/candidate": "d",
    "annotation/annotator": "acd",
    "annotation/score": "d",
    "annotation/filterrules": "a",  # a new version is added instead of a change
    "testsets/testset": "c",  # frozen once built, never deleted; only its license may be changed
    "annotation/repository": "acd",
    "annotation/utterance": "d",
    "crowd/crowdbatch": "acd",
    "crowd/crowdtask": "d",
    "crowd/crowdassignment": "d",
    "crowd/crowdbonus": "d",
    "retrieval/retrievalindex": "d",
    "retrieval/questionretrieval": "d",
    "negatives/questiongeneration": "d",
    "pairs/pairset": "cd",  # built or imported, never added by hand
    "pairs/pair": "d",
    "pairs/questionbuild": "d",
    "evaluation/campaign": "acd",
    "evaluation/randomtrialresult": "d",
    "evaluation/generation": "ad",
    "evaluation/generatedresponse": "d",
    "evaluation/system": "acd",
    "evaluation/evaluation": "ad",
    "evaluation/pairevaluation": "ad",
    # django-axes' records of logins: written by logins only; deleting an attempt unlocks its login
    "axes/accessattempt": "cd",
    "axes/accesslog": "cd",
    "axes/accessfailurelog": "cd",
}


def admin_model_expect(page: str, caps: str) -> Expect:
    """The expectation for one standard page ("changelist", "add", "history", "delete", "change",
    "redirect") of a model whose researcher may do ``caps``."""
    if page == "redirect":  # object_id/ only redirects to object_id/change/, where permissions apply
        return same(staff_only(REDIRECT))
    if page in ("changelist", "history"):
        return same(staff_only(FORBIDDEN, viewer=OK, researcher=OK))
    if page == "change":
        return Expect(
            get=staff_only(FORBIDDEN, viewer=OK, researcher=OK),
            post=staff_only(FORBIDDEN, researcher=SAVED_OR_REFUSED if "c" in caps else FORBIDDEN),
        )
    flag = {"add": "a", "delete": "d"}[page]
    allowed = SAVED_OR_REFUSED if flag in caps else FORBIDDEN
    return Expect(
        get=staff_only(FORBIDDEN, researcher=OK if flag in caps else FORBIDDEN),
        post=staff_only(FORBIDDEN, researcher=allowed),
    )


# Where each secret marker may be read: the roles that may read it anywhere they are let in, and
# (pattern, role) pairs beyond those. Every other response must not contain it.
SECRET_READERS: dict[str, tuple[set[str], set[tuple[str, str]]]] = {
    # annotator A sees the responses of their own unit (unmarked: test_the_unit_page_does_not_mark...)
    "GT-SECRET-A": ({"viewer", "researcher"}, {("annotate-next", "annotator_a"), ("annotate-unit", "annotator_a")}),
    "CTX-SECRET-A": ({"viewer", "researcher"}, {("annotate-next", "annotator_a"), ("annotate-unit", "annotator_a")}),
    "GT-SECRET-B": ({"viewer", "researcher"}, {("annotate-next", "annotator_b")}),
    "GT-SECRET-R": ({"viewer", "researcher"}, set()),
    # the crowd pages show a unit to whoever holds its signed token or the HIT (MTurk's preview)
    "GT-SECRET-C": (
        {"viewer", "researcher"},
        {(page, role) for page in ("crowd-unit", "crowd-mturk") for role in ROLES},
    ),
}
