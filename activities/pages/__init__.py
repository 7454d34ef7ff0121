"""Page images and text layers for OCR, and the searchable PDF built from them.

raster      Page images for OCR: one validated document on disk, one 8-bit page at a time.
searchable  Searchable PDF: the page images with an invisible text layer over each word.
textlayer   Born-digital PDF pages: read the text layer instead of running OCR on it.
wordbox     An OCR word's box as the readers of a page's layout use it: its rectangle, the page's
            slope.
"""

__all__ = [
    "raster",
    "searchable",
    "textlayer",
    "wordbox",
]
