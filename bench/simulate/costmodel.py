"""Cost model: seconds and object-store requests from what an action reads and writes.

    ingest      = commit_overhead_s + MB_written * write_s_per_mb + files_written * file_create_s
    maintenance = service_overhead_s + MB_read * read_s_per_mb + MB_written * rewrite_s_per_mb
                  + (files_in + files_out) * service_file_s
    query       = query_overhead_s + files_scanned * file_open_s + MB_scanned * scan_s_per_mb
                  + first_byte_share * requests_per_run * first_byte_ms / 1000

On an object store, ``requests`` holds the request model (:mod:`bench.simulate.requests`: requests
per phase, fitted to a real run's counted requests) and ``first_byte_share`` the share of a query's
requests whose first-byte latency adds to its wall time (1: all serial; fitted to query latencies
measured at two first-byte latencies).

Parameters come from ``layoutbench calibrate RUN`` (least squares on a real run's rows) or the
defaults below (measured once on the 2-core development machine, local disk). Request prices
default to the project's one dated price table (:mod:`runresults.review.prices`: Amazon S3
Standard, us-east-1), configurable per model.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from engines.config.registry import MB
from runresults.review.prices import DEFAULT_PRICES


class CalibrationError(ValueError):
    """A calibration file that is not one ``calibrate`` writes: the message names the file and the problem."""


@dataclass
class CostModel:
    commit_overhead_s: float = 0.20
    service_overhead_s: float = 0.30
    write_s_per_mb: float = 0.05
    read_s_per_mb: float = 0.02
    rewrite_s_per_mb: float = 0.05
    service_file_s: float = 0.01
    file_create_s: float = 0.01
    query_overhead_s: float = 0.08
    file_open_s: float = 0.004
    scan_s_per_mb: float = 0.01
    put_per_1000_usd: float = DEFAULT_PRICES.put.usd
    get_per_1000_usd: float = DEFAULT_PRICES.get.usd
    list_per_1000_usd: float = DEFAULT_PRICES.list.usd
    bytes_per_record: float | None = None
    first_byte_share: float = 0.0
    requests: dict[str, list[float]] | None = None  # kind|phase|op|object -> coefficients
    source: str = "defaults"

    def ingest_s(self, bytes_written: int, files: int) -> float:
        return self.commit_overhead_s + bytes_written / MB * self.write_s_per_mb + files * self.file_create_s

    def maintenance_s(self, bytes_read: int, bytes_written: int, files_in: int, files_out: int) -> float:
        return (self.service_overhead_s + bytes_read / MB * self.read_s_per_mb
                + bytes_written / MB * self.rewrite_s_per_mb + (files_in + files_out) * self.service_file_s)

    def query_s(self, files: int, bytes_scanned: int, requests: float = 0.0, first_byte_ms: float = 0.0) -> float:
        return (self.query_overhead_s + files * self.file_open_s + bytes_scanned / MB * self.scan_s_per_mb
                + self.first_byte_share * requests * first_byte_ms / 1000)

    def request_cost_usd(self, puts: int, gets: int, lists: int) -> float:
        return (puts * self.put_per_1000_usd + gets * self.get_per_1000_usd + lists * self.list_per_1000_usd) / 1000

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_text(json.dumps(asdict(self), indent=2))
        return p

    @classmethod
    def load(cls, path: str | Path) -> CostModel:
        """The model ``calibrate`` saved at ``path``; a file that is not one is a :class:`CalibrationError`
        naming it (a missing file stays ``FileNotFoundError``)."""
        text = Path(path).read_text()
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CalibrationError(f"calibration file {path}: not JSON ({exc})") from None
        return cls(**_checked(doc, path))


def _checked(doc: Any, path: str | Path) -> dict[str, Any]:
    """``doc``'s fields, each known to :class:`CostModel` and of its type."""
    if not isinstance(doc, dict):
        raise CalibrationError(f"calibration file {path}: expected a JSON object of cost-model fields, "
                               f"got {type(doc).__name__}")
    known = {f.name for f in fields(CostModel)}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise CalibrationError(f"calibration file {path}: unknown field(s) {', '.join(unknown)} (a file written by "
                               "`layoutbench calibrate` has: " + ", ".join(sorted(known)) + ")")
    for name, value in doc.items():
        default = getattr(CostModel, name, None)
        if name == "source":
            ok = isinstance(value, str)
        elif name == "requests":
            ok = value is None or (isinstance(value, dict) and all(
                isinstance(v, list) and all(_is_number(x) for x in v) for v in value.values()))
        else:
            ok = _is_number(value) or (value is None and default is None)
        if not ok:
            raise CalibrationError(f"calibration file {path}: {name} = {value!r} is not a "
                                   + ("string" if name == "source" else "number" if name != "requests"
                                      else "mapping of lists of numbers"))
    return doc


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
