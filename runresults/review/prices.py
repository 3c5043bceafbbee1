"""The one dated price table: compute, storage and object-store request list prices.

Every cost the project prints (the review's ledger, the report's object-store section, the
simulator's request cost) prices through here. Each price carries the date it was read and its
source; a scenario may override any of them (``review.prices``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

S3_SOURCE = "Amazon S3 pricing page, S3 Standard, US East (N. Virginia)"
S3_DATE = "2026-11-24"
EC2_SOURCE = ("Amazon EC2 on-demand pricing, m7g.large Linux, US East (N. Virginia): $0.0816 per hour for 2 vCPU "
              "(published rate as summarised by factualminds.com, 2026-06-17)")

# request operations of the counting proxy (bench/store/proxy.py) by S3's price tier
FREE_OPS = ("DELETE", "MULTIPART_ABORT")
PUT_TIER_OPS = ("PUT", "COPY", "MULTIPART_CREATE", "MULTIPART_PART", "MULTIPART_COMPLETE", "DELETE_MULTI",
                "CREATE_BUCKET")  # the multipart and multi-object-delete requests are POSTs or PUTs
LIST_OPS = ("LIST",)
HOURS_PER_MONTH = 730.0  # AWS's billing month for GB-month prices


class Price(BaseModel):
    """One list price: ``usd`` per its unit, the ``date`` it was read and its ``source``."""

    model_config = ConfigDict(extra="forbid")

    usd: float = Field(ge=0)
    date: str = Field(min_length=1)
    source: str = Field(min_length=1)


def _s3(usd: float, what: str) -> Price:
    return Price(usd=usd, date=S3_DATE, source=f"{S3_SOURCE}: {what}")


class Prices(BaseModel):
    """The ledger's prices. Units: ``core_hour`` per core-hour (on-demand), ``storage_gb_month``
    per GiB-month stored, ``put``/``get``/``list`` per 1,000 requests (PUT, COPY, POST and LIST
    requests share a tier; GET and the other requests another; DELETE is free)."""

    model_config = ConfigDict(extra="forbid")

    core_hour: Price = Field(default_factory=lambda: Price(usd=0.0408, date="2026-06-17", source=EC2_SOURCE))
    storage_gb_month: Price = Field(default_factory=lambda: _s3(0.023, "first 50 TB per month, per GB-month"))
    put: Price = Field(default_factory=lambda: _s3(0.005, "PUT, COPY, POST requests, per 1,000"))
    get: Price = Field(default_factory=lambda: _s3(0.0004, "GET, SELECT and all other requests, per 1,000"))
    list: Price = Field(default_factory=lambda: _s3(0.005, "LIST requests, per 1,000"))

    def request_usd(self, op: str) -> float:
        """The price of one request of ``op`` (the proxy's operation names)."""
        if op in FREE_OPS:
            return 0.0
        if op in LIST_OPS:
            return self.list.usd / 1000
        if op in PUT_TIER_OPS:
            return self.put.usd / 1000
        return self.get.usd / 1000

    def describe(self) -> str:
        """One line naming every price with its date and source."""
        return "; ".join(f"{name.replace('_', ' ')} ${p.usd:g} ({p.source}, {p.date})"
                         for name, p in (("core-hour", self.core_hour), ("GB-month", self.storage_gb_month),
                                         ("PUT/1000", self.put), ("GET/1000", self.get), ("LIST/1000", self.list)))


DEFAULT_PRICES = Prices()
