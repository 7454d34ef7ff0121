"""Configured document types: declared by tenants in their fields policy, or shipped.

spec      ``TypeSpec`` and ``FieldSpec``: a type's fields, label variants, value types,
          patterns and which are required; ``TYPE_NAME`` for names that travel
shipped   the types Custody ships configured (``discharge``), as JSON a tenant could write
"""

from custody.doctypes.shipped import shipped_types
from custody.doctypes.spec import FIELD_NAME, TYPE_NAME, FieldSpec, TypeSpec, ValueType

__all__ = ["FIELD_NAME", "TYPE_NAME", "FieldSpec", "TypeSpec", "ValueType", "shipped_types"]
