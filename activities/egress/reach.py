"""What a recipient's channel may reach from inside Custody: checked at registration,
before a release renders anything, and again at delivery.

    outbox  development only, or inside the operator's ``CUSTODY_EGRESS_OUTBOX_ROOT``;
            no symlink on the way; never one of Custody's own folders (the local
            store's objects, the witness, keys, signing and staging folders)
    s3      never Custody's own bucket and prefix (``CUSTODY_S3_BUCKET`` and
            ``CUSTODY_S3_PREFIX``, whichever store is in use) nor the witness bucket;
            written with the recipient's own credentials (``activities.egress.s3_access``)
    https   public unicast addresses only, in every environment
            (``activities.egress.addresses``); loopback and plain ``http://`` only in
            development; the operator's domain allowlist
            (``CUSTODY_EGRESS_HTTPS_ALLOWED_DOMAINS``) when one is set

A name is vetted at registration when it resolves (a recipient may register
before its DNS is live), and always at delivery, where the connection then
goes to the vetted address (:meth:`Reach.addresses`), never to the name again.

Refusals are ``EgressRefused``: ``RECIPIENT_BUCKET_RESERVED`` for Custody's own
storage, ``RECIPIENT_ADDRESS_REFUSED`` for anything else a channel may not
reach; both final. The message names the rule broken, never the target.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from activities.egress.addresses import IPAddress, Resolver, literal, resolve, system_resolver
from activities.egress.addresses import vet_ip as vet_ip
from activities.egress.channels import RecipientChannel, split_s3_target
from custody.errors import Code, DeliveryFailed, EgressRefused
from custody.settings import Settings

#: Names that are the cloud's metadata service wherever they resolve.
_METADATA_NAMES = frozenset({"metadata", "metadata.google.internal", "metadata.goog"})


@dataclass(frozen=True)
class Reach:
    """One deployment's rules for where recipients' channels may go."""

    production: bool = False
    allowed_domains: tuple[str, ...] = ()
    reserved_buckets: tuple[tuple[str, str], ...] = ()  # (bucket, prefix); "" the whole bucket
    reserved_dirs: tuple[Path, ...] = ()
    outbox_root: Path | None = None
    resolver: Resolver = system_resolver

    @classmethod
    def of(cls, settings: Settings, resolver: Resolver = system_resolver) -> Reach:
        """The rules ``settings`` imply: its environment, allowlist, buckets and folders."""
        # The configured bucket whichever store is in use: the same settings serve an S3 store.
        buckets = [(settings.s3_bucket, settings.s3_prefix)]
        buckets += [(settings.witness_s3_bucket, "")] if settings.witness_s3_bucket else []
        folders = [settings.objects_dir] if settings.store == "local" else []
        folders += [settings.keys_dir or settings.home / "keys", settings.signing_path]
        folders += [
            settings.staging_path,
            *([settings.witness_dir] if settings.witness_dir else []),
        ]
        domains = settings.egress_https_allowed_domains.split(",")
        return cls(
            production=settings.env == "production",
            allowed_domains=tuple(d.strip().strip(".").lower() for d in domains if d.strip()),
            reserved_buckets=tuple(buckets),
            reserved_dirs=tuple(folders),
            outbox_root=settings.egress_outbox_root,
            resolver=resolver,
        )

    def check(self, spec: RecipientChannel, *, resolve_names: bool = False) -> None:
        """Refuse ``spec`` if it may not be reached; ``resolve_names`` vets a name's addresses."""
        if spec.kind == "outbox":
            self._outbox(spec.target)
        elif spec.kind == "s3":
            self._bucket(spec.target)
        else:
            self._url(spec.target, resolve_names)

    def addresses(self, spec: RecipientChannel) -> list[IPAddress]:
        """The HTTPS recipient's addresses, resolved now and every one vetted: connect to these.

        A name that resolves to nothing is ``RECIPIENT_UNREACHABLE`` (DNS may recover).
        """
        self._url(spec.target, resolve_names=False)
        url = urlsplit(spec.target)
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            found = resolve(str(url.hostname), port, self.resolver)
        except OSError:
            raise DeliveryFailed(Code.RECIPIENT_UNREACHABLE, "the name did not resolve") from None
        for address in found:
            self._address(address)
        return found

    def _url(self, target: str, resolve_names: bool) -> None:
        url = urlsplit(target)
        host = str(url.hostname).lower().rstrip(".")
        if url.scheme == "http" and self.production:
            _refuse("plain http:// is for development only")
        address = literal(host)
        if self.allowed_domains and not (address is None and self._allowed(host)):
            _refuse("the host is not in the operator's allowlist of recipient domains")
        if address is not None:
            self._address(address)
            return
        if host in _METADATA_NAMES:
            _refuse("a cloud metadata service")
        if host == "localhost" or host.endswith(".localhost"):
            self._loopback()
        if resolve_names:
            port = url.port or (443 if url.scheme == "https" else 80)
            try:
                for found in resolve(host, port, self.resolver):
                    self._address(found)
            except OSError:
                return  # not resolvable yet: delivery vets what it resolves to then

    def _allowed(self, host: str) -> bool:
        return any(host == d or host.endswith(f".{d}") for d in self.allowed_domains)

    def _address(self, address: IPAddress) -> None:
        why = vet_ip(address)
        if why == "loopback":
            self._loopback()
        elif why is not None:
            _refuse(f"a {why} address")

    def _loopback(self) -> None:
        if self.production:
            _refuse("a loopback address (development only)")

    def _bucket(self, target: str) -> None:
        bucket, prefix = split_s3_target(target)
        for reserved, reserved_prefix in self.reserved_buckets:
            if bucket == reserved and _overlap(prefix, reserved_prefix):
                raise EgressRefused(Code.RECIPIENT_BUCKET_RESERVED, "one of Custody's own buckets")

    def _outbox(self, target: str) -> None:
        if self.production and self.outbox_root is None:
            _refuse("the outbox is for development (or set CUSTODY_EGRESS_OUTBOX_ROOT)")
        real = os.path.realpath(target)
        if real != os.path.normpath(target):
            _refuse("the outbox path goes through a symlink")
        if self.outbox_root is not None and not _within(real, self.outbox_root):
            _refuse("the outbox is outside the operator's outbox root")
        if any(_within(real, folder) for folder in self.reserved_dirs):
            raise EgressRefused(Code.RECIPIENT_BUCKET_RESERVED, "one of Custody's own folders")


def _refuse(why: str) -> None:
    raise EgressRefused(Code.RECIPIENT_ADDRESS_REFUSED, why)


def _within(path: str, folder: Path) -> bool:
    base = os.path.realpath(folder)
    return path == base or path.startswith(base.rstrip("/") + "/")


def _overlap(prefix: str, reserved: str) -> bool:
    """Whether two key prefixes (folders, "" the whole bucket) share any key."""
    a, b = prefix.strip("/"), reserved.strip("/")
    return not a or not b or a == b or a.startswith(f"{b}/") or b.startswith(f"{a}/")
