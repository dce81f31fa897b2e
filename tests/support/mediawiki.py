"""Run a real MediaWiki 1.39 (Debian package, SQLite, ``php -S``) on 127.0.0.1 for tests.

The Debian debs are unpacked into a cache dir (no apache2, nothing under /etc); each server
gets its own workdir holding the SQLite database, LocalSettings.php and the server log.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.support.process import free_port, start_group, stop_group, wait_http

log = logging.getLogger(__name__)

PHP_PACKAGES = ["php-cli", "php-sqlite3", "php-intl", "php-mbstring", "php-xml"]
PHP_EXTENSIONS = ["pdo_sqlite", "intl", "mbstring", "dom", "xmlreader"]
EXTENSIONS = ["TextExtracts", "Cite", "ParserFunctions"]
EXTRA_SETTINGS = """
# --- added by tests/support/mediawiki.py ---
$wgRCMaxAge = 20 * 365 * 86400;  # keep imported history visible in recentchanges
$wgJobRunRate = 0;  # jobs are run once by runJobs.php; requests stay read-only
$wgEnableUploads = false;
$wgEnableEmail = false;
$wgArticlePath = "/index.php/$1";
$wgShowExceptionDetails = true;
# Attribute imported edits to local accounts, as on the source wiki (not "imported>Name").
$wgHooks['ImportHandleUnknownUser'][] = static function ( $name ) {
	return !User::createNew( $name );
};
"""


def _run(
    cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run a command; raise RuntimeError with its output tail if it fails."""
    t0 = time.monotonic()
    res = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True)
    log.debug("%.100s: rc=%s in %.2fs", " ".join(cmd), res.returncode, time.monotonic() - t0)
    if res.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} failed (rc={res.returncode})\n"
            f"--- stderr ---\n{res.stderr[-3000:]}\n--- stdout ---\n{res.stdout[-3000:]}"
        )
    return res


def _as_root(cmd: list[str]) -> list[str]:
    """Prefix ``sudo -n`` when not root; fail clearly when that is not possible."""
    if os.geteuid() == 0:
        return cmd
    if shutil.which("sudo"):
        return ["sudo", "-n", *cmd]
    raise RuntimeError(
        "the MediaWiki integration test needs PHP; install it once as root: "
        f"apt-get install --no-install-recommends {' '.join(PHP_PACKAGES)}"
    )


def _apt(args: list[str], cwd: Path | None = None) -> None:
    """apt-get with a single `apt-get update` retry (package lists may be missing)."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = ["apt-get", "-o", "APT::Sandbox::User=root", *args]
    if args[0] != "download":
        cmd = _as_root(cmd)
    try:
        _run(cmd, cwd=cwd, env=env)
    except RuntimeError:
        log.info("apt-get %s failed; running apt-get update and retrying", args[0])
        _run(_as_root(["apt-get", "update"]), env=env)
        _run(cmd, cwd=cwd, env=env)


def _php_ok() -> bool:
    if shutil.which("php") is None:
        return False
    check = " && ".join(f"extension_loaded('{e}')" for e in PHP_EXTENSIONS)
    return subprocess.run(["php", "-r", f"exit(({check}) ? 0 : 1);"], check=False).returncode == 0


def ensure_mediawiki(cache_dir: Path) -> Path:
    """Install PHP via apt if missing, unpack MediaWiki 1.39 debs into cache_dir (once);
    return the MediaWiki root (the dir with api.php)."""
    cache_dir = Path(cache_dir).resolve()
    cache_dir.mkdir(parents=True, exist_ok=True)
    mw = cache_dir / "mediawiki"
    with open(cache_dir / ".mediawiki.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # serialise pytest-xdist workers
        if not _php_ok():
            log.info("installing %s", " ".join(PHP_PACKAGES))
            _apt(["install", "-y", "--no-install-recommends", *PHP_PACKAGES])
        if (mw / "api.php").is_file():
            return mw
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(dir=cache_dir) as tmp_name:
            tmp = Path(tmp_name)
            _apt(["download", "mediawiki", "mediawiki-classes"], cwd=tmp)
            for deb in sorted(tmp.glob("*.deb")):
                _run(["dpkg-deb", "-x", str(deb), str(tmp / "root")])
            src = tmp / "root/usr/share/mediawiki"
            # The package links extensions/config/images/LocalSettings.php to /var/lib and /etc.
            for link in src.iterdir():
                if link.is_symlink() and os.readlink(link).startswith("/"):
                    link.unlink()
                    if link.name == "extensions":
                        link.symlink_to("extensions-core")
                    elif link.name != "LocalSettings.php":
                        link.mkdir()
            src.rename(mw)
            debs = [d.name for d in tmp.glob("*.deb")]
        log.info("unpacked %s into %s in %.1fs", debs, mw, time.monotonic() - t0)
    return mw


class MediaWikiServer:
    """A real MediaWiki on 127.0.0.1 loaded from an XML export; use as a context manager."""

    def __init__(
        self, xml_path: Path, workdir: Path, cache_dir: Path, port: int | None = None
    ) -> None:
        self.xml_path = Path(xml_path).resolve()
        self.workdir = Path(workdir).resolve()
        self.cache_dir = Path(cache_dir).resolve()
        self.port = port or free_port()
        self.server_url = f"http://127.0.0.1:{self.port}"
        self.api_url = f"{self.server_url}/api.php"
        self.log_path = self.workdir / "php-server.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def _maint(self, mw: Path, script: str, *args: str, stdin: str = "") -> None:
        env = {**os.environ, "MW_CONFIG_FILE": str(self.workdir / "LocalSettings.php")}
        cmd = ["php", str(mw / "maintenance" / script), *args]
        _run(cmd, cwd=self.workdir, env=env, stdin=stdin)

    def _install(self, mw: Path) -> None:
        db = self.workdir / "db"
        shutil.rmtree(db, ignore_errors=True)
        (self.workdir / "LocalSettings.php").unlink(missing_ok=True)
        self._maint(
            mw,
            "install.php",
            "--dbtype",
            "sqlite",
            "--dbpath",
            str(db),
            "--dbname",
            "wiki",
            "--confpath",
            str(self.workdir),
            "--server",
            self.server_url,
            "--scriptpath",
            "",
            "--pass",
            secrets.token_urlsafe(16),
            "--extensions",
            ",".join(EXTENSIONS),
            "--skins",
            "Vector",
            "TestWiki",
            "Admin",
        )
        with open(self.workdir / "LocalSettings.php", "a", encoding="utf-8") as f:
            f.write(EXTRA_SETTINGS)
        # Drop the installer's "Main Page" (created now; it would show up as a new page in
        # recentchanges and swallow an imported "Main Page") and its log/RC rows.
        self._maint(mw, "deleteBatch.php", "-r", "test setup", stdin="Main Page\n")
        for table in ("logging", "recentchanges"):
            self._maint(mw, "sql.php", "--query", f"DELETE FROM {table}")

    def start(self) -> MediaWikiServer:
        """Install, import the XML export, rebuild derived tables, serve; wait for api.php."""
        t0 = time.monotonic()
        mw = ensure_mediawiki(self.cache_dir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._install(mw)
        self._maint(mw, "importDump.php", "--quiet", str(self.xml_path))
        self._maint(mw, "rebuildrecentchanges.php", "--quiet")
        self._maint(mw, "initSiteStats.php", "--update", "--quiet")
        # importDump parses pages in file order; refresh so templates imported later count.
        self._maint(mw, "refreshLinks.php", "--quiet")
        self._maint(mw, "runJobs.php", "--quiet")
        env = {**os.environ, "MW_CONFIG_FILE": str(self.workdir / "LocalSettings.php")}
        env["PHP_CLI_SERVER_WORKERS"] = "4"  # parallel requests; workers share the pgid
        self._proc = start_group(
            ["php", "-S", f"127.0.0.1:{self.port}", "-t", str(mw)],
            log_path=self.log_path,
            env=env,
            cwd=mw,
        )
        try:
            wait_http(
                self._proc,
                f"{self.api_url}?action=query&meta=siteinfo&format=json",
                timeout=30.0,
                log_path=self.log_path,
                name="MediaWiki (php -S)",
                ready=lambda body: "query" in json.loads(body),
            )
        except BaseException:
            self.stop()
            raise
        log.info("MediaWiki up at %s in %.1fs", self.api_url, time.monotonic() - t0)
        return self

    def stop(self) -> None:
        """Kill the php -S process group (parent and workers) and reap it."""
        proc, self._proc = self._proc, None
        stop_group(proc, "php -S")

    def __enter__(self) -> MediaWikiServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
