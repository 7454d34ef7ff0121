"""Tesseract kept loaded: a helper process per engine lane, fed one page after another.

Running the ``tesseract`` binary for every page loads ``eng.traineddata`` every
time: about 155 ms of a 0.6-1.5 s page on the 2-core dev box, a sixth of the
engine's time spent before it reads a pixel. So each lane keeps one helper: a
small Python process that opens libtesseract's C API (the library the Debian
binary itself runs, ``libtesseract5``) through ``ctypes`` once, then recognises
the pages it is sent. Same library, same traineddata, same settings: its TSV is
byte-identical to the binary's on every corpus page (tests/activities/engines/test_tess_server.py).

Why a process, not the library inside the OCR worker: OpenMP reads
``OMP_THREAD_LIMIT`` once, when it loads, and the worker's torch brings its own
OpenMP runtime, so only a process of its own can hold Tesseract to one thread;
and a crash or a hang in native code takes down the helper, not the worker. A
page past its deadline is first cancelled inside Tesseract (its monitor's
deadline), and if the helper still has not answered a few seconds later it is
killed; the next page starts a fresh one.

The pipe protocol, little-endian: a request is ``<IIII`` (width, height,
deadline in ms, upscale factor) and ``width * height`` bytes of 8-bit grey
pixels, which the helper upscales (Lanczos) itself, on the engine's core; every frame
the helper writes is ``<BI`` (status, length) and ``length`` bytes: its first
frame answers the start (0: the library's version, 1: why it could not start),
then one per request (0: TSV, 1: why recognition failed). Page text only ever
crosses this pipe; a failure names the library's complaint, never the text.
"""

from __future__ import annotations

import ctypes
import struct
import sys

import numpy as np
import numpy.typing as npt

from activities.engines.lane_helper import (
    _FAILED,
    _OK,
    LaneHelper,
    reply,
    requests,
)
from custody.errors import HelperError as HelperError

_REQUEST = struct.Struct("<IIII")
_KILL_GRACE_S = 5.0  # past the page deadline, before an unanswering helper is killed
_LIBRARY = "libtesseract.so.5"


class TesseractHelper(LaneHelper):
    """One helper process, started on first use and restarted after it fails."""

    def __init__(
        self, tessdata: str, language: str, oem: int, psm: int, start_timeout_s: float = 60.0
    ) -> None:
        argv = [sys.executable, "-m", __name__, tessdata, language, str(oem), str(psm)]
        # One OpenMP thread: a lane is one core's worth of work (activities.engines.lanes).
        super().__init__(argv, "tesseract", {"OMP_THREAD_LIMIT": "1"}, start_timeout_s)
        self.version = ""

    def start(self) -> str:
        """Start the helper now (a missing library fails here); the library's version."""
        self._running()
        return self.version

    def tsv(self, gray: npt.NDArray[np.uint8], timeout_s: float, scale: int = 1) -> str:
        """Tesseract's TSV (no header row) for an HxW uint8 page, read ``scale`` times larger.

        The helper upscales (Lanczos) on its own core, not on the worker's GIL;
        boxes in the TSV are in upscaled pixels.
        """
        height, width = gray.shape
        request = _REQUEST.pack(width, height, max(1, int(timeout_s * 1000)), scale)
        payload = self._exchange(request, gray, timeout_s + _KILL_GRACE_S)
        return payload.decode("utf-8", errors="replace")

    def _started(self, payload: bytes) -> None:
        self.version = payload.decode()


# -- the helper process --------------------------------------------------------------


class _Api:
    """libtesseract's C API, one ``TessBaseAPI`` initialised once."""

    def __init__(self, tessdata: str, language: str, oem: int, psm: int) -> None:
        lib = ctypes.CDLL(_LIBRARY)
        vp, cp, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
        lib.TessVersion.restype = cp
        lib.TessBaseAPICreate.restype = vp
        lib.TessBaseAPIInit2.argtypes = [vp, cp, cp, i]
        lib.TessBaseAPISetPageSegMode.argtypes = [vp, i]
        lib.TessBaseAPISetImage.argtypes = [vp, vp, i, i, i, i]
        lib.TessBaseAPIRecognize.argtypes = [vp, vp]
        lib.TessBaseAPIGetTsvText.argtypes = [vp, i]
        lib.TessBaseAPIGetTsvText.restype = vp
        lib.TessDeleteText.argtypes = [vp]
        lib.TessBaseAPIClear.argtypes = [vp]
        lib.TessMonitorCreate.restype = vp
        lib.TessMonitorSetDeadlineMSecs.argtypes = [vp, i]
        lib.TessMonitorDelete.argtypes = [vp]
        self._lib = lib
        self._api = lib.TessBaseAPICreate()
        if lib.TessBaseAPIInit2(self._api, tessdata.encode(), language.encode(), oem) != 0:
            raise HelperError(f"libtesseract could not load {language!r} from {tessdata}")
        lib.TessBaseAPISetPageSegMode(self._api, psm)
        self.version = (lib.TessVersion() or b"").decode()

    def tsv(self, pixels: bytes, width: int, height: int, deadline_ms: int, scale: int) -> str:
        lib, api = self._lib, self._api
        if scale != 1:
            pixels, width, height = _upscaled(pixels, width, height, scale)
        lib.TessBaseAPISetImage(api, pixels, width, height, 1, width)
        monitor = lib.TessMonitorCreate()
        try:
            lib.TessMonitorSetDeadlineMSecs(monitor, deadline_ms)
            if lib.TessBaseAPIRecognize(api, monitor) != 0:
                raise HelperError("recognition failed or passed its deadline")
            text = lib.TessBaseAPIGetTsvText(api, 0)
            try:
                return ctypes.string_at(text).decode("utf-8", errors="replace") if text else ""
            finally:
                lib.TessDeleteText(text)
        finally:
            lib.TessMonitorDelete(monitor)
            lib.TessBaseAPIClear(api)


def _upscaled(pixels: bytes, width: int, height: int, scale: int) -> tuple[bytes, int, int]:
    from PIL import Image  # only helpers that upscale pay for the import

    page = Image.frombytes("L", (width, height), pixels)
    size = (width * scale, height * scale)
    return page.resize(size, Image.Resampling.LANCZOS).tobytes(), size[0], size[1]


def _serve(tessdata: str, language: str, oem: str, psm: str) -> int:
    try:
        api = _Api(tessdata, language, int(oem), int(psm))
    except (OSError, AttributeError, HelperError) as err:
        reply(_FAILED, str(err).encode())
        return 2
    reply(_OK, api.version.encode())
    for (width, height, deadline_ms, scale), pixels in requests(_REQUEST):
        try:
            reply(_OK, api.tsv(pixels, width, height, deadline_ms, scale).encode())
        except HelperError as err:
            reply(_FAILED, str(err).encode())
    return 0  # the worker closed the pipe or exited


if __name__ == "__main__":
    sys.exit(_serve(*sys.argv[1:5]))
