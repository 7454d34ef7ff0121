"""What the rapidocr lane helper and its reader share: the detection-limit modes and a line.

Apart from both so that the helper's loop (``rapid_server``) and the model
code it loads lazily (``rapid_reader``) do not import each other.
"""

from __future__ import annotations

#: How ``Det.limit_side_len`` applies: cap the longest side, or raise the shortest.
LIMIT_MAX, LIMIT_MIN = 0, 1

#: One recognised line: its box, text, score and its words (text, score, box): from the
#: helper, every line has its words, each box tightened to the word's ink.
Line = tuple[list[list[float]], str, float, list[tuple[str, float, list[list[float]]]]]
