"""Files from the project's shared folder (``../shared`` beside the repository): seeds and Hudi fixtures.

A clone of the repository alone has no such folder; every test that needs one of its files skips
with a one-line reason naming the file, and every other test runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
HUDI_FIXTURES = "fixtures/hudi-tables"


def missing_reason(rel: str) -> str:
    """Why a test that needs ``../shared/<rel>`` cannot run here."""
    return f"needs ../shared/{rel} (the project's shared folder beside the repository), not found at {SHARED / rel}"


def shared_path(rel: str) -> Path:
    """``../shared/<rel>``; the calling test skips, naming the file, when it is absent."""
    path = SHARED / rel
    if not path.exists():
        pytest.skip(missing_reason(rel))
    return path


def keys_or_skip(keys: list[str], rel: str) -> list:
    """Parameters for a test over fixture ``keys``: one skipped parameter naming ``rel`` when there are none."""
    return keys or [pytest.param(None, marks=pytest.mark.skip(reason=missing_reason(rel)))]
