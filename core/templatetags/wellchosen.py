import json

from django import template

register = template.Library()


@register.filter
def as_json(value) -> str:
    """Pretty JSON for result and parameter dicts (autoescaped by the template)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
