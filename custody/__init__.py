"""Custody's light shared core: contracts, codes, names and settings.

Nothing here imports torch, boto3 or the Temporal worker, so the workflow
sandbox can pass it through and any process can import it cheaply.
"""

__version__ = "0.1.0"
