"""The object store behind one small interface.

``LocalStore`` (a directory) is the embedded default; ``S3Store`` (boto3) is
the production store. Both pass the same contract suite (tests/stores/).
``open_store`` picks one from settings, wrapped in ``SealedStore`` when keys
are configured; boto3 is imported only for S3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custody.stores.base import ObjectExists, ObjectMissing, ObjectStore, StoreUnavailable

if TYPE_CHECKING:
    from custody.settings import Settings

__all__ = [
    "ObjectExists",
    "ObjectMissing",
    "ObjectStore",
    "StoreUnavailable",
    "open_raw_store",
    "open_store",
]


def open_store(settings: Settings) -> ObjectStore:
    """The configured store; sealed (envelope encryption) whenever keys are configured."""
    from custody.keys.keyring import load_keyring

    keyring = load_keyring(settings)
    if keyring is None:
        return open_raw_store(settings)
    from custody.stores.sealed import SealedStore

    return SealedStore(open_raw_store(settings), keyring)


def open_raw_store(settings: Settings) -> ObjectStore:
    """The backend without sealing: for records that must outlive a tenant's key."""
    if settings.store == "s3":
        from custody.stores.s3 import S3Store

        return S3Store.from_settings(settings)
    from custody.stores.local import LocalStore

    return LocalStore(settings.objects_dir)
