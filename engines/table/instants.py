"""Instant times: 17-digit ``yyyyMMddHHmmssSSS`` in UTC, strictly increasing within one table.

Two clocks: the wall clock (Hudi's behaviour) and a deterministic logical clock that starts at a
fixed time and advances one millisecond per instant — benchmarks use it so that the same seed
gives byte-identical files (instant times are written into every row's meta columns).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

FORMAT = "%Y%m%d%H%M%S"


def format_instant(moment: datetime) -> str:
    moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.strftime(FORMAT) + f"{moment.microsecond // 1000:03d}"


def parse_instant(instant: str) -> datetime:
    """Parse a 17-digit (or Hudi's older 14-digit) instant time; raise ValueError naming it."""
    if not instant.isdigit() or len(instant) not in (14, 17):
        raise ValueError(f"invalid instant time {instant!r}: expected 17 digits yyyyMMddHHmmssSSS")
    try:
        base = datetime.strptime(instant[:14], FORMAT).replace(tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"invalid instant time {instant!r}: {exc}") from None
    millis = int(instant[14:]) if len(instant) == 17 else 0
    return base + timedelta(milliseconds=millis)


def completion_mtime_ns(instant: str) -> int:
    """The modification time (ns since the epoch) a completed instant file gets: the instant's own time.

    Apache Hudi 1.x takes a table version 6 instant's completion time from its completed file's
    modification time, formatted in the JVM's zone (``HoodieInstantTimeGenerator.formatDate``,
    ``hoodie.table.timeline.timezone`` LOCAL by default), and files a log file into the newest file
    slice whose base instant is at or before the completion time of the instant its name carries
    (``HoodieFileGroup.getBaseInstantTime``). With the logical clock our instants lie months before
    the wall clock, so a real modification time put every log file into its group's newest slice:
    an as-of read of an older slice lost its logs' rows and an incremental read opened logs the
    cleaner had removed. The digits are read as local time, the zone Hudi formats them in, so the
    completion time Hudi reads back is the instant time itself."""
    moment = parse_instant(instant).replace(tzinfo=None)  # naive: local time, as Hudi's LOCAL zone
    return int(moment.replace(microsecond=0).timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def next_after(candidate: str, last: str | None) -> str:
    """``candidate`` if it is later than ``last``, else ``last`` + 1 ms."""
    if last is None or candidate > last:
        return candidate
    return format_instant(parse_instant(last) + timedelta(milliseconds=1))


class InstantClock:
    """Hands out strictly increasing instant times.

    ``logical_start`` switches to the deterministic clock: the n-th instant of a table is
    ``logical_start + n ms`` regardless of the wall clock.
    """

    def __init__(self, logical_start: datetime | None = None) -> None:
        self._logical_start = logical_start
        self._lock = threading.Lock()

    def next(self, last: str | None) -> str:
        with self._lock:
            if self._logical_start is not None:
                candidate = format_instant(self._logical_start)
            else:
                candidate = format_instant(datetime.now(UTC))
            return next_after(candidate, last)
