"""Key material: the keyring, the files it lives in, and the payload codec built on it.

    keyring   payload keys for Temporal and key-encryption keys for objects (``Keyring``)
    files     the keyring's 0600 files, written whole before they have a name
    codec     AES-256-GCM over every Temporal payload, keyed by the keyring

Signing keys are the ledger's (``custody.ledger.signing``); the keys that sign
state versions are the state's (``custody.state.signers``).
"""

from custody.keys.codec import EncryptionCodec
from custody.keys.keyring import Keyring, TenantShredded, load_keyring, require_keyring

__all__ = ["EncryptionCodec", "Keyring", "TenantShredded", "load_keyring", "require_keyring"]
