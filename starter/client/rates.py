"""Token buckets of admission control: one per (tenant, source), one per tenant.

``Custody-Source-Id`` is the caller's free choice, so a bucket keyed by it alone
would let tenant A drain clinic-b's bucket by sending ``clinic-b``, and let any
tenant escape its limit by rotating source ids. Source buckets are therefore
scoped to the authenticated tenant, and every tenant has one more bucket over
all of its sources: the source bucket keeps one noisy source from starving the
tenant's others, the tenant bucket keeps one tenant from starving the rest.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from custody.errors import AdmissionReason, AdmissionRejected
from custody.settings import Settings

# Beyond this many buckets in a map, the full (refilled) ones are forgotten.
MAX_BUCKETS = 10_000


@dataclass
class _Bucket:
    tokens: float
    at: float


class _Buckets:
    """Buckets of one rate and burst, by key; a full bucket is the same as none."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, float(burst)
        self._by_key: dict[object, _Bucket] = {}

    def get(self, key: object, now: float) -> _Bucket:
        bucket = self._by_key.get(key)
        if bucket is None:
            if len(self._by_key) >= MAX_BUCKETS:
                self._forget_full(now)
            bucket = self._by_key[key] = _Bucket(tokens=self.burst, at=now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        return bucket

    def _forget_full(self, now: float) -> None:
        for key, b in list(self._by_key.items()):
            if b.tokens + (now - b.at) * self.rate >= self.burst:
                del self._by_key[key]

    def __len__(self) -> int:
        return len(self._by_key)


class Rates:
    """The rate checks of one admission controller."""

    def __init__(self, settings: Settings) -> None:
        self.sources = _Buckets(settings.admission_source_rate, settings.admission_source_burst)
        self.tenants = _Buckets(settings.admission_tenant_rate, settings.admission_tenant_burst)

    def check(self, tenant: str, source: str) -> tuple[_Bucket, _Bucket]:
        """The two buckets this request draws on, or :class:`AdmissionRejected` if one is empty.

        Nothing is taken here: :func:`take` once every other check has passed,
        so a refusal for any reason costs the caller no tokens.
        """
        now = time.monotonic()
        by_source = self.sources.get((tenant, source), now)
        if by_source.tokens < 1:
            wait = (1 - by_source.tokens) / self.sources.rate
            raise AdmissionRejected(AdmissionReason.SOURCE_RATE, max(1.0, wait))
        by_tenant = self.tenants.get(tenant, now)
        if by_tenant.tokens < 1:
            wait = (1 - by_tenant.tokens) / self.tenants.rate
            raise AdmissionRejected(AdmissionReason.TENANT_RATE, max(1.0, wait))
        return by_source, by_tenant


def take(buckets: tuple[_Bucket, ...]) -> None:
    for bucket in buckets:
        bucket.tokens -= 1
