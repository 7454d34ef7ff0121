"""An independent witness of Custody's logs (C2SP tlog-witness), run as its own process.

server  ``custody witness serve``: the ``add-checkpoint`` HTTP endpoint.
state   Its key and the size it last cosigned per log, in a directory of its own.

``python -m starter.witness --dir D --port P`` (``custody witness serve``) is what
``custody up`` starts.
"""

__all__ = ["server", "state"]
