"""Redacted views: a derived, separately signed copy of a published document, text removed."""
