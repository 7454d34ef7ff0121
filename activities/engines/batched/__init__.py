"""PP-OCRv6 in batches across pages and lines, for a GPU OCR worker (issue #32).

A page's reading is the lane engine's (``activities.engines.rapid``), word for
word; what changes is how many pages and lines share a model call. Heavy
libraries load only inside the helper process (``build`` and below); the
engine, batcher and tuning are light.

batcher    The batcher in the OCR worker's process: pages from many documents, a few
           batches in flight.
buckets    Shape buckets: which pages share one detector call, which lines one recogniser call.
build      Inside the batched helper: the reader built from RapidOCR's params and the options.
ctc_head   The recogniser's per-column best character and its score, as a two-node ONNX model.
detect     Detection over many pages at once: each page prepared alone, run in shape buckets.
engine     PP-OCRv6 in batches across pages and lines: the engine a GPU OCR worker runs.
profiling  onnxruntime's own profile of a session, summed up: where its run time goes.
reader     Inside the batched helper: many pages, few calls (detect, recognise, orientation).
recognise  Recognition over the lines of many pages at once, sorted by width into calls.
server     The batched PP-OCRv6 helper: one process, models loaded once, fed batches of pages.
sessions   onnxruntime sessions for the batched reader: CPU, CUDA or TensorRT, and IOBinding.
tuning     What shapes the batched engine's calls, recorded with every result it reads.
"""

__all__ = [
    "batcher",
    "buckets",
    "build",
    "ctc_head",
    "detect",
    "engine",
    "profiling",
    "reader",
    "recognise",
    "server",
    "sessions",
    "tuning",
]
