"""Secrets passed where they should not be: a password inside a store spec.

A password in ``--store pgvector:postgresql://user:PASSWORD@host/db`` works, but it shows
in the process list and shell history. :func:`spec_password_warning` returns the warning to
print (never the password itself); the store still opens.

Hook (cli/options.py or stores/pgvector.py, where the spec is read)::

    warning = spec_password_warning(spec)
    if warning: err_console.print(f"warning: {warning}")
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

_PASSWORD_KEYS = frozenset({"password", "pass", "pwd", "passwd"})


def spec_password(spec: str) -> str | None:
    """The password carried by a store spec (URL userinfo or a ``password=`` query key)."""
    _, _, rest = spec.partition(":")
    if "://" not in rest:
        return None
    try:
        parts = urlsplit(rest)
        password = parts.password
    except ValueError:
        return None
    if password:
        return unquote(password)
    for key, value in parse_qsl(parts.query, keep_blank_values=False):
        if key.lower() in _PASSWORD_KEYS and value:
            return value
    return None


def spec_password_warning(spec: str) -> str | None:
    """A one-line warning when ``spec`` holds a password, naming the safe alternatives."""
    if spec_password(spec) is None:
        return None
    scheme = spec.partition(":")[0].lower()
    if scheme in ("pgvector", "postgresql", "postgres"):
        fix = "set PGPASSWORD in the environment or put it in ~/.pgpass (chmod 600)"
    else:
        fix = "pass it through the store's environment variable instead"
    return (
        "the --store spec holds a password, which other users can read in the process list "
        f"and which stays in shell history; {fix}"
    )


def scrub(text: str, secrets: list[str | None]) -> str:
    """``text`` with every non-empty secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
