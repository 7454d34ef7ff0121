"""Page images and text layers for OCR, and the searchable PDF built from them.

layout      The one model of a page's words and lines: published text, fields and redaction read it.
columns     Prose columns: where the layout's rows split into a left and a right column.
raster      Page images for OCR: one validated document on disk, one 8-bit page at a time.
searchable  Searchable PDF: the page images with an invisible text layer over each word.
textlayer   Born-digital PDF pages: read the text layer instead of running OCR on it.
wordbox     An OCR word's box as the readers of a page's layout use it: its rectangle, the page's
            slope.
"""

__all__ = [
    "columns",
    "layout",
    "raster",
    "searchable",
    "textlayer",
    "wordbox",
]
