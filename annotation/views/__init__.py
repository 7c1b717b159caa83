from .annotate import annotate_correct, annotate_next, annotate_pause, annotate_unit
from .dashboard import (
    dashboard_block,
    dashboard_dataset,
    dashboard_index,
    dashboard_invitation_revoke,
    dashboard_invite,
    dashboard_open,
    dashboard_refresh,
    invite_accept_view,
)
from .home import annotate_choose, home
from .members import dashboard_members_add, dashboard_members_remove

__all__ = [
    "annotate_choose",
    "dashboard_members_add",
    "dashboard_members_remove",
    "annotate_correct",
    "annotate_next",
    "annotate_pause",
    "annotate_unit",
    "dashboard_block",
    "dashboard_dataset",
    "dashboard_index",
    "dashboard_invitation_revoke",
    "dashboard_invite",
    "dashboard_open",
    "dashboard_refresh",
    "invite_accept_view",
    "home",
]
