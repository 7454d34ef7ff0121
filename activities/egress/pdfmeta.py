"""A release's identity: the mark, its check code, and what a released PDF embeds.

:class:`ReleaseMark` is what is printed on every released page and embedded in
the file. In the PDF it goes into the trailer ``/ID``, an XMP packet in a
``custody`` namespace and the info dict. pdfium writes neither XMP nor a chosen
``/ID`` (its ``/ID`` is random and its info dict carries the wall clock), so the
document it assembles is rewritten whole by qpdf (``pikepdf``): one revision,
only the objects reachable from a catalog that keeps ``/Pages`` and our
``/Metadata``, nothing of any earlier producer. Both ``/ID`` entries are the
first 16 bytes of SHA-256(release id), as the PDF spec asks of a file's first
version, so the identity can be checked without trusting the XMP.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import re
from xml.etree import ElementTree
from xml.sax.saxutils import escape

import pikepdf
from pydantic import BaseModel, ConfigDict, Field, field_validator

NAMESPACE = "https://custody.invalid/ns/egress/1.0/"
PRODUCER = "Custody egress"
# qpdf computes /ID[1] itself; with static_id it writes this fixed value, which
# is replaced in place by the same number of hex digits, so no offset moves.
_QPDF_STATIC_ID = b"<31415926535897932384626433832795>"
_XMP_LIMIT = 256 * 1024
_CATALOG_KEYS = frozenset({"/Type", "/Pages", "/Metadata"})
_PAGE_KEYS = frozenset({"/Type", "/Parent", "/MediaBox", "/Resources", "/Contents"})


# Crockford's base32: no I, L, O, U, so a misread 0/O or 1/I/L still decodes.
CHECK_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


DEFAULT_TEMPLATE = "Released to {recipient} · {date} · policy {policy} · release {release_id}"


class ReleaseMark(BaseModel):
    """Who a release is for and under which policy: printed on and embedded in the file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    release_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
    recipient: str = Field(min_length=1, max_length=200)
    policy_name: str = Field(min_length=1, max_length=200)
    policy_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    #: The policy's line; fields in braces: recipient, date, policy, release_id.
    template: str = Field(default=DEFAULT_TEMPLATE, min_length=1, max_length=200)

    @field_validator("date")
    @classmethod
    def _real_date(cls, value: str) -> str:
        datetime.date.fromisoformat(value)
        return value

    @field_validator("recipient", "policy_name")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.isprintable():
            raise ValueError("control characters are not allowed")
        return value

    def text(self) -> str:
        """The visible line, from the policy's template (the id is printed in the band anyway)."""
        return self.template.format(
            recipient=self.recipient,
            date=self.date,
            policy=self.policy_name,
            release_id=self.release_id,
        )

    def check_code(self) -> str:
        """Five characters that confirm a release id read back from print."""
        return check_code(self.release_id)


def check_code(release_id: str) -> str:
    """Crockford base32 of 25 bits of a domain-separated SHA-256 of the id."""
    value = int.from_bytes(hashlib.sha256(b"custody-check\0" + release_id.encode()).digest()[:4])
    return "".join(CHECK_ALPHABET[(value >> shift) & 31] for shift in (27, 22, 17, 12, 7))


# --- the PDF ------------------------------------------------------------------


class PdfIdentity(BaseModel):
    """What a released PDF says about itself."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    release_id: str
    policy_sha256: str | None
    recipient: str | None
    #: Whether the trailer ``/ID`` is the one derived from ``release_id``.
    id_matches: bool


def file_id(release_id: str) -> bytes:
    """The 16 bytes both ``/ID`` entries carry."""
    return hashlib.sha256(release_id.encode()).digest()[:16]


def write_identity(data: bytes, mark: ReleaseMark) -> bytes:
    """Rewrite ``data`` with the mark's ``/ID``, XMP and info dict, and nothing else."""
    with pikepdf.open(io.BytesIO(data)) as pdf:
        _strip(pdf)
        pdf.Root.Metadata = pdf.make_stream(
            xmp_packet(mark), Type=pikepdf.Name.Metadata, Subtype=pikepdf.Name.XML
        )
        pdf.trailer.Info = pdf.make_indirect(_info(mark))
        ident = pikepdf.String(file_id(mark.release_id))
        pdf.trailer.ID = pikepdf.Array([ident, ident])
        out = io.BytesIO()
        pdf.save(out, static_id=True, compress_streams=True)
    return _set_second_id(out.getvalue(), file_id(mark.release_id))


def read_identity(data: bytes) -> PdfIdentity | None:
    """The release identity a PDF carries in its XMP, or None when it has none."""
    try:
        with pikepdf.open(io.BytesIO(data)) as pdf:
            metadata = pdf.Root.get("/Metadata")
            if not isinstance(metadata, pikepdf.Stream):
                return None
            xmp = metadata.read_bytes()
            ids = pdf.trailer.get("/ID")
            first = bytes(ids[0]) if isinstance(ids, pikepdf.Array) and len(ids) else b""
    except pikepdf.PdfError:
        return None
    fields = _parse_xmp(xmp)
    release_id = fields.get("releaseId")
    if not release_id:
        return None
    return PdfIdentity(
        release_id=release_id,
        policy_sha256=fields.get("policySha256"),
        recipient=fields.get("recipient"),
        id_matches=first == file_id(release_id),
    )


def xmp_packet(mark: ReleaseMark) -> bytes:
    """A fixed-layout XMP packet: same mark, same bytes."""
    ours = {
        "releaseId": mark.release_id,
        "recipient": mark.recipient,
        "policyName": mark.policy_name,
        "policySha256": mark.policy_sha256,
        "releaseDate": mark.date,
    }
    custom = "".join(f"   <custody:{k}>{escape(v)}</custody:{k}>\n" for k, v in ours.items())
    return (
        '<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n'
        '<x:xmpmeta xmlns:x="adobe:ns:meta/">\n'
        ' <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
        '  <rdf:Description rdf:about=""\n'
        f'    xmlns:custody="{NAMESPACE}"\n'
        '    xmlns:xmp="http://ns.adobe.com/xap/1.0/"\n'
        '    xmlns:pdf="http://ns.adobe.com/pdf/1.3/">\n'
        f"{custom}"
        f"   <xmp:CreateDate>{mark.date}</xmp:CreateDate>\n"
        f"   <pdf:Producer>{PRODUCER}</pdf:Producer>\n"
        "  </rdf:Description>\n"
        " </rdf:RDF>\n"
        "</x:xmpmeta>\n"
        '<?xpacket end="r"?>'
    ).encode()


def _info(mark: ReleaseMark) -> pikepdf.Dictionary:
    return pikepdf.Dictionary(
        Title=pikepdf.String(f"Release {mark.release_id}"),
        Producer=pikepdf.String(PRODUCER),
        CreationDate=pikepdf.String("D:" + mark.date.replace("-", "")),
        CustodyReleaseId=pikepdf.String(mark.release_id),
        CustodyRecipient=pikepdf.String(mark.recipient),
        CustodyPolicy=pikepdf.String(mark.policy_name),
        CustodyPolicySha256=pikepdf.String(mark.policy_sha256),
    )


def _strip(pdf: pikepdf.Pdf) -> None:
    # The pages are pixels plus invisible text already, so this only guards
    # against a future producer adding outlines, names, actions or annotations.
    for key in set(pdf.Root.keys()) - _CATALOG_KEYS:
        del pdf.Root[key]
    for page in pdf.pages:
        for key in set(page.obj.keys()) - _PAGE_KEYS:
            del page.obj[key]


def _set_second_id(data: bytes, ident: bytes) -> bytes:
    placeholder = b"<" + ident.hex().encode() + b">" + _QPDF_STATIC_ID
    if data.count(placeholder) != 1:
        raise ValueError("trailer /ID not found exactly once")
    return data.replace(placeholder, placeholder[: len(placeholder) // 2] * 2)


def _parse_xmp(xmp: bytes) -> dict[str, str]:
    # The PDF may come back from outside: no DTDs (entity expansion), bounded size.
    if len(xmp) > _XMP_LIMIT or re.search(rb"<!(DOCTYPE|ENTITY)", xmp, re.IGNORECASE):
        return {}
    try:
        root = ElementTree.fromstring(xmp)
    except ElementTree.ParseError:
        return {}
    prefix = "{" + NAMESPACE + "}"
    return {
        el.tag.removeprefix(prefix): (el.text or "").strip()
        for el in root.iter()
        if el.tag.startswith(prefix)
    }
