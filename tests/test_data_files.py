"""The data shipped in data/ is the verbatim copy its SOURCE.md describes."""

import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_en_fr_pairs_match_their_recorded_checksum():
    folder = ROOT / "data" / "en_fr"
    expected = re.search(r"sha256: `([0-9a-f]{64})`", (folder / "SOURCE.md").read_text()).group(1)
    assert hashlib.sha256((folder / "pairs.tsv").read_bytes()).hexdigest() == expected


def test_data_dir_falls_back_to_the_repository_copy(tmp_path, monkeypatch):
    from companion import paths

    monkeypatch.delenv("COMPANION_DATA", raising=False)
    monkeypatch.setenv("COMPANION_DATA", str(tmp_path))
    assert paths.shared_data_dir() == tmp_path.resolve()
    monkeypatch.delenv("COMPANION_DATA")
    found = paths.shared_data_dir()
    assert (found / "en_fr" / "pairs.tsv").is_file()
