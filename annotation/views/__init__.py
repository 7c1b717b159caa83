from .annotate import annotate_next, annotate_pause, annotate_unit
from .dashboard import (
    dashboard_block,
    dashboard_dataset,
    dashboard_index,
    dashboard_invite,
    dashboard_open,
    dashboard_refresh,
    invite_accept_view,
)
from .home import home

__all__ = [
    "annotate_next",
    "annotate_pause",
    "annotate_unit",
    "dashboard_block",
    "dashboard_dataset",
    "dashboard_index",
    "dashboard_invite",
    "dashboard_open",
    "dashboard_refresh",
    "invite_accept_view",
    "home",
]
