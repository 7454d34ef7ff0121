"""The fault-injection harness behind ``custody chaos`` (its CLI: :mod:`starter.cli.chaos`).

``runner`` starts one throwaway stack (``harness``) and runs the ``scenarios``;
each trial (``trial``) injects its faults from outside (``outside``, ``outages``)
and ``checks`` what every document became.
"""
