"""The untrusted-input boundary: inspection, decoding and rendering in a locked-down, forked child.

Every decode of submitted bytes happens behind this room's child; this face
names the modules and imports none of them.

child       The worker's side of one forked inspection child: its three pipes and their deadlines.
identify    ``custody egress identify``'s readings of a file, decoded in the locked-down child.
inspection  Inspect an untrusted document on disk before any OCR is spent.
landlock    Landlock: the inspection child's filesystem and network, closed without root.
layers      Which sandbox layers a child gets here; production refuses to run without one.
lockdown    Lock a forked inspection child down before it decodes one untrusted byte.
pdfcheck    The PDF rules: checked with pdfium and a raw read of the bytes, never by rendering.
pdfraw      A bounded read of a PDF's raw bytes, for what pdfium's API does not show.
probe       A test-only order: from inside a locked-down child, try what an exploit would try.
render      Page rendering inside the locked-down child: untrusted bytes in, raw gray bitmaps out.
sandboxed   Page images for OCR, decoded in the sandboxed child: ``iter_pages`` behind the
            boundary.
syscalls    The inspection child's syscall filter (libseccomp): processes, sockets, signals.
untrusted   Run ``inspect_path`` on untrusted bytes in a child process with bounded time and
            memory.
zygote      The inspection zygote: decoders imported once, a fresh forked child per document.
"""

__all__ = [
    "child",
    "identify",
    "inspection",
    "landlock",
    "layers",
    "lockdown",
    "pdfcheck",
    "pdfraw",
    "probe",
    "render",
    "sandboxed",
    "syscalls",
    "untrusted",
    "zygote",
]
