"""A generation manifest that is not UTF-8 text is refused naming it (issue 32), not a
UnicodeDecodeError traceback, and nothing is appended to it."""

from __future__ import annotations

from pathlib import Path

from worldmind import cli


def test_generate_refuses_a_non_utf8_manifest_naming_it(tmp_path: Path, capsys) -> None:
    out = tmp_path / "gen"
    out.mkdir()
    manifest = out / "generation-manifest.tsv"
    manifest.write_bytes(b"dev\tparams\tseed=0\xff\xfe\n")
    before = manifest.read_bytes()
    rc = cli.main(["generate", "--houses", "houses_dev.jsonl.gz", "--indices", "0", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and f"{manifest}: not UTF-8 text" in err and "Traceback" not in err
    assert manifest.read_bytes() == before and not list(out.glob("*.json"))
