"""Reading a Content-Security-Policy header in tests."""


def csp_directives(header: str) -> dict[str, list[str]]:
    """``"script-src 'self'; object-src 'none'"`` -> ``{"script-src": ["'self'"], "object-src": ["'none'"]}``."""
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives
