"""The embedded stack (``custody up``/``down``) and the Web UI's codec server.

admin           The development deployment's own admin identity, made by ``custody up``.
codec_server    The Temporal Web UI's remote codec endpoint (``custody codec-server`` runs it).
codec_sessions  Browser sessions of the codec server: what its cookie carries instead of the token.
stack           The embedded stack: Temporal dev server on SQLite, its Web UI, both workers.
"""

__all__ = [
    "admin",
    "codec_server",
    "codec_sessions",
    "stack",
]
