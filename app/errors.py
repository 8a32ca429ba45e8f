"""The error tree of hwadvisor.

HwadvisorError
 +-- ConfigError           a setting is missing or malformed
 +-- NotFoundError         a named thing (machine, run, token, plug-in) does not exist
 +-- ConflictError         the request contradicts what is stored
 +-- AuthError             no or wrong credentials (HTTP 401)
 |    +-- ForbiddenError   valid credentials that may not do this (HTTP 403)
 +-- LimitError            a request is over a size or count limit (HTTP 413)
 +-- DatabaseUnavailable   the database cannot be reached now (HTTP 503)

Each error carries a message a user can act on; the CLI prints it on one line, the API
answers it as a JSON problem body.
"""

from __future__ import annotations


class HwadvisorError(Exception):
    """Root of every error hwadvisor raises on purpose."""

    status_code = 500

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigError(HwadvisorError):
    status_code = 500


class NotFoundError(HwadvisorError):
    status_code = 404


class InvalidInput(HwadvisorError):
    """Input that passed the schema but makes no sense (a CSV row, a catalog entry missing its name)."""

    status_code = 422


class ConflictError(HwadvisorError):
    status_code = 409


class AuthError(HwadvisorError):
    status_code = 401


class ForbiddenError(AuthError):
    status_code = 403


class LimitError(HwadvisorError):
    status_code = 413


class RateLimited(HwadvisorError):
    """Too many failed attempts from one client; ``retry_after_s`` says when to try again."""

    status_code = 429

    def __init__(self, message: str, *, retry_after_s: int, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.retry_after_s = retry_after_s


class Busy(RateLimited):
    """The server process is computing as many heavy answers as it allows at once (``heavy_requests``)."""

    status_code = 503


class DatabaseUnavailable(HwadvisorError):
    status_code = 503
