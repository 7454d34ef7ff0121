"""Run under aics-tlog's own Python 3.12 virtualenv: check a Custody log with that code alone.

Imports nothing from Custody. Argument: a JSON file naming the log's tile
folder, its checkpoint, the log and witness vkeys, the entries to prove and an
older checkpoint to prove consistency from. Prints one JSON object of results.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aics_tlog import (
    FileSystemTileReader,
    VerifiedTileReader,
    audit_tiles,
    consistency_proof_from_tiles,
    inclusion_proof_from_tiles,
    parse_note,
    parse_vkey,
    verify_checkpoint,
    verify_consistency,
    verify_leaf_inclusion,
)
from aics_tlog.checkpoint import checkpoint_from_note


def main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    tiles = FileSystemTileReader(spec["tiles"])
    note = parse_note(Path(spec["checkpoint"]).read_bytes())
    result = verify_checkpoint(
        note, parse_vkey(spec["log_vkey"]), [parse_vkey(spec["witness_vkey"])], quorum=1
    )
    checkpoint, _ = checkpoint_from_note(note)
    size, root = checkpoint.size, checkpoint.root
    report = audit_tiles(tiles, size, root)  # every tile and bundle against the signed root
    verified = VerifiedTileReader(tiles, size, root)
    proofs = {}
    for index in spec["indexes"]:
        entry = verified.entry(index)
        proof = inclusion_proof_from_tiles(tiles, index, size)
        proofs[str(index)] = {
            "entry": entry.decode(),
            "proof": [h.hex() for h in proof],
            "ok": verify_leaf_inclusion(entry, index, size, proof, root),
        }
    old = parse_note(Path(spec["old_checkpoint"]).read_bytes())
    old_cp, _ = checkpoint_from_note(old)
    consistency = consistency_proof_from_tiles(tiles, old_cp.size, size)
    print(
        json.dumps(
            {
                "origin": checkpoint.origin,
                "size": size,
                "checkpoint_ok": result.ok,
                "tiles": report.tiles,
                "bundles": report.bundles,
                "proofs": proofs,
                "consistency": [h.hex() for h in consistency],
                "consistency_ok": verify_consistency(
                    old_cp.size, size, old_cp.root, root, consistency
                ),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
