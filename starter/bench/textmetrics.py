"""Text-quality measures for OCR output against a ground truth.

Pure Python and standard library only, so tests, the OCR activity and the
benchmark can all import it without loading torch. Both measures follow the
corpus's scoring advice (``shared/corpus/MANIFEST.md``): CER after whitespace
normalisation, and an order-independent bag-of-words F1, because the ground
truth's reading order is only approximate on multi-column forms.

``token_f1`` is the same F1 over letter-and-digit runs. The corpus's FUNSD
truth splits words at punctuation ("(614) 466- 5087", MANIFEST.md), so
``word_f1`` counts an engine's correct "466-5087" as one word missed and one
extra; over runs, the two agree. The benchmark reports both
(docs/ocr-benchmark.md says which figures came from which).
"""

from __future__ import annotations

import re
from collections import Counter

_WS = re.compile(r"\s+")
_TOKEN = re.compile(r"[^\W_]+")  # a run of letters or digits, in any script
# Punctuation stripped from word ends only: "5087," matches "5087", while
# inner punctuation ("466-5087", "U.S.A") stays part of the word.
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>«»“”‘’-–—/\\|*_~"


def normalise_ws(text: str) -> str:
    """Collapse every run of whitespace (newlines, tabs, form feeds) to one space."""
    return _WS.sub(" ", text).strip()


def levenshtein(a: str, b: str) -> int:
    """Edit distance with unit costs; O(len(a) * len(b)) time, O(len(b)) memory."""
    if len(a) < len(b):
        a, b = b, a  # keep the rows as short as possible
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(
                min(
                    previous[j] + 1,  # deletion
                    current[j - 1] + 1,  # insertion
                    previous[j - 1] + (char_a != char_b),  # substitution
                )
            )
        previous = current
    return previous[-1]


def cer(hyp: str, ref: str) -> float:
    """Character error rate: edit distance over the reference length.

    Whitespace is normalised on both sides first. An empty reference gives 0.0
    for an empty hypothesis and 1.0 otherwise, so the rate is always defined.
    The rate can exceed 1.0 when the hypothesis is much longer than the reference.
    """
    hyp_n, ref_n = normalise_ws(hyp), normalise_ws(ref)
    if not ref_n:
        return 0.0 if not hyp_n else 1.0
    return levenshtein(hyp_n, ref_n) / len(ref_n)


def words(text: str) -> list[str]:
    """Lower-cased words with surrounding punctuation stripped; empty ones dropped."""
    stripped = (w.strip(_EDGE_PUNCT) for w in text.lower().split())
    return [w for w in stripped if w]


def tokens(text: str) -> list[str]:
    """Lower-cased runs of letters or digits: "466-5087" and "466- 5087" both give 466, 5087."""
    return _TOKEN.findall(text.lower())


def word_f1(hyp: str, ref: str) -> float:
    """Order-independent F1 over the multisets of words of ``hyp`` and ``ref``.

    Two empty texts agree perfectly (1.0); one empty side scores 0.0.
    """
    return _bag_f1(words(hyp), words(ref))


def token_f1(hyp: str, ref: str) -> float:
    """``word_f1`` over ``tokens``: blind to where punctuation splits a word (FUNSD truth)."""
    return _bag_f1(tokens(hyp), tokens(ref))


def _bag_f1(hyp: list[str], ref: list[str]) -> float:
    hyp_bag, ref_bag = Counter(hyp), Counter(ref)
    if not hyp_bag and not ref_bag:
        return 1.0
    matched = sum((hyp_bag & ref_bag).values())
    if matched == 0:
        return 0.0
    precision = matched / sum(hyp_bag.values())
    recall = matched / sum(ref_bag.values())
    return 2 * precision * recall / (precision + recall)
