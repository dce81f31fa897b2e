import errno
import sqlite3
import subprocess
from pathlib import Path

import pytest

from pipelines.errors import describe_os_error

OUT = Path("data/wiki")


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (
            PermissionError(errno.EACCES, "Permission denied", "data/wiki/.tmp-7"),
            "data/wiki/.tmp-7: permission denied; give this user access to it and its folder, "
            "or pass another --out",
        ),
        (
            OSError(errno.EROFS, "Read-only file system", "data/.wiki.tmp-7-1795/stats.json"),
            "data/.wiki.tmp-7-1795/stats.json: read-only file system; make it writable, "
            "or pass another --out",
        ),
        (
            PermissionError(errno.EACCES, "Permission denied", "params.yaml"),
            "params.yaml: permission denied; give this user access to it and its folder",
        ),
        (
            OSError(errno.EROFS, "Read-only file system", "data"),
            "data: read-only file system; make it writable, or pass another --out",
        ),
        (
            OSError(errno.ENOSPC, "No space left on device", "data/wiki/stats.json"),
            "data/wiki/stats.json: no space left on device; free some space, or pass another --out",
        ),
        (
            ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
            "Connection refused",
        ),
    ],
)
def test_a_machine_error_is_one_line_naming_its_path_and_the_fix(error, says):
    assert describe_os_error(error, OUT) == says


def test_a_missing_program_is_named_with_how_to_get_it(tmp_path):
    (tmp_path / "bin").mkdir()
    with pytest.raises(FileNotFoundError) as missing:
        subprocess.run(["git", "status"], env={"PATH": str(tmp_path / "bin")}, check=False)
    message = describe_os_error(missing.value)
    assert message == (
        "this command needs the 'git' program, which is not on PATH; install git "
        "(e.g. apt-get install git)"
    )


def test_a_cache_database_the_machine_refuses_is_one_line_saying_which_caches(tmp_path):
    from pipelines.errors import describe_cache_error
    from pipelines.llm.cache import ResponseCache

    folder = tmp_path / "llm.sqlite"
    folder.mkdir()  # a folder where the cache file should be: SQLite cannot open it
    with pytest.raises(sqlite3.OperationalError) as refused:
        ResponseCache(folder)
    message = describe_cache_error(refused.value)
    assert message.startswith("a cache database failed: unable to open database file;")
    assert "\n" not in message and "free some space or make them writable" in message
