"""The one data converter every client and worker uses.

Pydantic models in, JSON payloads out; with a keyring, every payload is
encrypted (custody.keys.codec) and failures carry their message and stack trace as
an encoded payload too, since an exception message is the usual way text leaks.
Without a keyring (tests, development without keys) payloads stay plain JSON.
``require_sealed`` (production) makes the codec refuse plaintext payloads.
"""

from __future__ import annotations

import dataclasses

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes

from custody.keys.codec import EncryptionCodec
from custody.keys.keyring import Keyring


def data_converter(
    keyring: Keyring | None = None, *, require_sealed: bool = False
) -> DataConverter:
    if keyring is None:
        return pydantic_data_converter
    return dataclasses.replace(
        pydantic_data_converter,
        payload_codec=EncryptionCodec(keyring, require_sealed=require_sealed),
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )
