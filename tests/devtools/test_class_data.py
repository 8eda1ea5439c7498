"""The tests' quick-start JVM options: the archive only where there is one."""

from pathlib import Path

from streamjobs.devtools.class_data import QUICK_COMPILER, fast_start_options


def test_the_archive_is_named_only_when_it_exists(tmp_path: Path) -> None:
    archive = tmp_path / "spark-classes.jsa"
    assert fast_start_options(archive) == QUICK_COMPILER
    assert fast_start_options(None, quick_compiler=False) == ""

    archive.write_bytes(b"classes")
    assert fast_start_options(archive) == f"{QUICK_COMPILER} -XX:SharedArchiveFile={archive}"
    assert fast_start_options(archive, quick_compiler=False) == f"-XX:SharedArchiveFile={archive}"
