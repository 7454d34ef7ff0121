"""Custody's light shared core: what every process shares, and nothing only one process uses.

Nothing here imports torch, boto3 or the Temporal worker, so the workflow
sandbox can pass it through and any process can import it cheaply.

At the top, the contracts:

    errors      every exception and code        models      workflow and activity models
    settings    one Settings for every process  ids         workflow IDs and object keys
    queues      task queues, search attributes  refs        signed object references
    canonical   RFC 8785 JSON                   converter   the one data converter
    egress      release models and names        fields      the shapes of fields read
    limits      intake limits (light)           redactions  where redacted views live
    field_index the keyed field index's layout: one writer (publish), several readers
                (find, verify, egress report), so it is a contract like ``ids``
    cpus        the engine's cores; ``settings`` validates CUSTODY_ENGINE_CPUS with it
    temporal    the connection every process makes (workers, edge, CLI, SDK)
    tracing     OpenTelemetry interceptors for that connection (loaded only when on)
    extras      the optional parts (pip extras) and the answer when one is missing

The rooms, the write side every worker shares:

    stores/     the object store: local, S3, sealed, and scratch expiry
    ledger/     the audit log: events, Merkle trees, checkpoints, signing
    state/      signed versions and what lives in them: policies, recipients, pools, pins
    keys/       the keyring, its files, the payload codec

The read side (verification, trust, retention) is the auditor's and lives in
``starter.evidence``.
"""

__version__ = "0.1.0"
