"""Application rules in the output check: fields read and judged, the language check, consent."""
