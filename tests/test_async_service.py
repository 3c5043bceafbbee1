"""The one async service loop and the one fault hook (no Spark)."""

from __future__ import annotations

import threading

import pytest

from engines.async_service import AsyncService
from engines.table import faults


def test_async_service_runs_when_notified_records_errors_and_closes() -> None:
    rounds: list[int] = []
    failing = threading.Event()

    def work() -> list[int]:
        rounds.append(len(rounds))
        if failing.is_set():
            raise RuntimeError("plan failed")
        return [len(rounds)]

    seen: list[Exception] = []
    service = AsyncService(work, "test-service", interval_s=60, on_error=seen.append)
    service.notify()
    assert service.wait_idle(10) and service.results == [1]  # at once, not after the 60 s period
    failing.set()
    service.notify()
    assert service.wait_idle(10)
    assert service.errors == ["RuntimeError: plan failed"] and [str(e) for e in seen] == ["plan failed"]
    service.close()  # joins; a second close is a no-op
    service.close()
    assert rounds == [0, 1]
    with pytest.raises(ValueError, match="positive"):
        AsyncService(work, "bad", interval_s=0)


def test_one_step_hook_observes_then_raises_the_named_point() -> None:
    seen: list[str] = []
    remove = faults.observe(lambda name: seen.append(f"point:{name}"))
    try:
        faults.step("clean.after_file_deleted", seen.append)
    finally:
        remove()
    assert seen == ["clean.after_file_deleted", "point:clean.after_file_deleted"]
    with pytest.raises(ValueError, match="add it to engines.table.faults.POINTS"):
        faults.step("clean.after_everything")
