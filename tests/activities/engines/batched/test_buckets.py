"""Shape buckets and the CTC head: which inputs share a call, and what a call hands back.

The recogniser's column count is checked against the real model, and the head
runs in real onnxruntime; no stand-ins.
"""

from __future__ import annotations

import numpy as np
import onnxruntime

from activities.engines.batched.buckets import (
    DetBuckets,
    batch_size,
    line_groups,
    line_steps,
    line_width,
    powers_of_two,
)
from activities.engines.batched.ctc_head import INDEX, PROB, SCORES, head_model
from activities.engines.batched.sessions import Model, Runtime, open_session
from activities.engines.rapid_models import MODELS, model_dir


def test_det_buckets_keep_each_page_shape_at_32_and_round_up_coarser() -> None:
    """At the detector's own stride a page keeps its shape; a coarser step rounds sides up."""
    assert DetBuckets().bucket(960, 736) == (960, 736)
    assert DetBuckets(px=128).bucket(960, 736) == (1024, 768)
    planned = DetBuckets(px=64).planned()
    assert (960, 768) in planned and (768, 960) in planned
    assert all(max(shape) == 960 for shape in planned) and len(planned) == len(set(planned))


def test_line_groups_join_only_equal_widths_at_one_px() -> None:
    """Exact buckets put a line with another only at its own width; no call passes ``most``."""
    widths = [120, 48, 120, 300, 120, 48]
    groups = list(line_groups(widths, px=1, most=2))
    assert groups == [(48, [1, 5]), (120, [0, 2]), (120, [4]), (300, [3])]
    coarse = list(line_groups([100, 110, 130], px=32, most=8))
    assert coarse == [(128, [0, 1]), (160, [2])]


def test_line_width_is_a_lone_lines_width_with_its_floor() -> None:
    """48 px high at the crop's own aspect, never under the floor (``rec_min_width``)."""
    assert line_width(32, 320, 48) == 480
    assert line_width(40, 20, 48) == 48
    assert line_width(40, 20, 320) == 320


def test_line_steps_are_the_recognisers_own_column_counts() -> None:
    """The real recogniser's output columns for each input width (so padding is cut exactly)."""
    runtime = Runtime()
    rec = Model(open_session(str(model_dir() / MODELS["rec"][0]), "rec", runtime), runtime)
    for width in (48, 100, 101, 104, 349, 355):
        out = rec.run(np.zeros((1, 3, 48, width), dtype=np.float32))
        assert out.shape[1] == line_steps(width), width


def test_batch_sizes_are_powers_of_two_up_to_the_most() -> None:
    """A GPU's detector batches are padded to few sizes: 1, 2, 4 ... and the most itself."""
    assert powers_of_two(16) == [1, 2, 4, 8, 16]
    assert powers_of_two(12) == [1, 2, 4, 8, 12]
    assert batch_size(3, powers_of_two(16)) == 4 and batch_size(40, [1, 2]) == 2


def test_ctc_head_answers_numpys_argmax_and_max() -> None:
    """The hand-written ONNX head picks each column's best character (first on ties) and score."""
    runtime = Runtime()
    session = open_session(head_model(), "head", runtime)
    scores = np.random.default_rng(0).random((3, 40, 18710), dtype=np.float32)
    scores[1, 7, [5, 9]] = 2.0  # a tie: the first index wins, as in numpy
    index, prob = session.run([INDEX, PROB], {SCORES: scores})
    assert index.dtype == np.int64 and index.shape == (3, 40) and index[1, 7] == 5
    assert (index == scores.argmax(axis=2)).all() and (prob == scores.max(axis=2)).all()
    bound = Model(session, runtime)
    value = bound.run_value(onnxruntime.OrtValue.ortvalue_from_numpy(scores))
    assert (value[0] == index).all() and (value[1] == prob).all()
