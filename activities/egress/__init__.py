"""Egress: releasing documents to recipients outside Custody."""
