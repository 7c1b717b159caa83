"""The attack suites: what an attacker or a careless user sends, and what must come back (see
docs/security.md)."""
