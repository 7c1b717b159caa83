"""Names of what researchers create (datasets, test sets, repositories, systems, campaigns)."""

from django.utils.text import slugify

from core.errors import UserError


def slug_check(*, name: str, what: str) -> str:
    """``name`` when it is a slug as URLs, files and commands take it; a UserError naming ``what`` otherwise."""
    if not name or slugify(name) != name:
        raise UserError(f"{what} name {name!r} must be a slug (lower-case letters, digits, '-' and '_')")
    return name
