"""Bi-temporal edge stamps: when a relation became true, when the graph recorded it, when it was
invalidated; and which relations are active at a given time.

A relation carries up to three ISO-8601 stamps (dates or timestamps, with or without a time
zone; a stamp without one is read as UTC, so a date and a zoned timestamp compare):

``valid_from``      valid time: from when the statement holds in the world
``recorded_at``     record (transaction) time: from when the graph holds it
``invalidated_at``  from when it is invalidated (kept, never deleted: invalidate-not-delete)

A relation is **active at** time ``T`` when ``valid_from <= T`` and ``recorded_at <= T`` (it was
true and known by then) and ``T < invalidated_at``; a missing stamp never excludes it. A view
without an ``as_of`` time reads the graph at the current time (:func:`now`).
"""

from __future__ import annotations

from datetime import date, datetime, timezone


class InstantError(ValueError):
    """A stamp that is not an ISO date or timestamp."""


def parse_instant(value: str | date | datetime) -> datetime:
    """``value`` as an aware UTC datetime (a naive one, or a date, is read as UTC)."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InstantError(f"not an ISO date or timestamp: {value!r}") from None
    else:
        raise InstantError(f"not an ISO date or timestamp: {value!r}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def instant_text(moment: datetime) -> str:
    """An instant as the ISO text views report (UTC)."""
    return moment.astimezone(timezone.utc).isoformat()


def now() -> datetime:
    return datetime.now(timezone.utc)


def active_at(
    when: datetime, valid_from: datetime | None, recorded_at: datetime | None, invalidated_at: datetime | None
) -> bool:
    """True when a relation with these stamps is active at ``when`` (module docstring)."""
    return (
        (valid_from is None or valid_from <= when)
        and (recorded_at is None or recorded_at <= when)
        and (invalidated_at is None or when < invalidated_at)
    )


__all__ = ["InstantError", "parse_instant", "instant_text", "now", "active_at"]
