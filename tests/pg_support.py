"""Start and stop a throwaway PostgreSQL 16 + pgvector server for the tests.

The binaries come from the ``pgserver`` wheel (PostgreSQL 16.2 with pgvector 0.6.2 in
``pgserver/pginstall``); we drive ``initdb`` and ``pg_ctl`` ourselves rather than
``pgserver.get_server`` because that helper listens on a unix socket only, uses trust
auth, and when run as root it adds a ``pgserver`` system user and widens the permissions
of every parent folder of the data directory and of the venv.

What this module does instead:

- listens on ``127.0.0.1`` on a free TCP port, unix sockets off;
- password auth (scram-sha-256) for TCP, so wrong passwords are refused;
- durability off (fsync, full_page_writes, synchronous_commit): a test server;
- PostgreSQL refuses to run as root, so under root the server runs as the
  unprivileged ``nobody`` account (``INDEXCHECK_PG_OS_USER`` overrides; a missing account
  is created with ``useradd --system``). Its data lives in a fresh 0700 folder owned by
  that account; if that account cannot read the binaries where the venv keeps them, the
  34 MB ``pginstall`` tree (and its ``pgserver.libs``) is copied next to the data.
  Nothing else is chmod-ed.

``start_postgres(tmpdir) -> (dsn, stop)`` is the plain function; ``pg_server`` is a
session-scoped pytest fixture (import it into a conftest); ``shared_server()`` starts one
server per process on first use (the fixture and ``tests/builders/pgvector.py`` use it).
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.util import free_port

SUPERUSER = "postgres"
DBNAME = "indexcheck"


def pginstall_dir() -> Path:
    """The PostgreSQL install that ships inside the pgserver wheel."""
    # find_spec, not import: importing pgserver runs platformdirs/lockfile set-up we skip
    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        raise RuntimeError("the tests need the 'pgserver' package: pip install pgserver")
    return Path(spec.origin).resolve().parent / "pginstall"


@dataclass
class PgServer:
    """A running test server: connection parts, a DSN with the password, and stop()."""

    host: str
    port: int
    user: str
    password: str
    dbname: str
    root: Path
    _stop: Callable[[], None] = field(repr=False)

    @property
    def dsn(self) -> str:
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{self.dbname}"

    def stop(self) -> None:
        self._stop()


def _os_account() -> pwd.struct_passwd | None:
    """The account the server runs as: None to run as ourselves (not root)."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("INDEXCHECK_PG_OS_USER", "nobody")
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(name)


def _reachable(path: Path, acct: pwd.struct_passwd, want: int) -> bool:
    """True if ``acct`` (neither owner nor in the group, as 'other') can traverse to
    ``path`` and has the ``want`` permission bits ('other' class) on it."""
    path = path.resolve()
    for parent in reversed(path.parents):
        st = parent.stat()
        if st.st_uid != acct.pw_uid and not st.st_mode & stat.S_IXOTH:
            return False
    st = path.stat()
    return st.st_uid == acct.pw_uid or (st.st_mode & want) == want


def _run(cmd: list[str], acct: pwd.struct_passwd | None, cwd: Path, timeout: float) -> None:
    kw: dict[str, Any] = {}
    if acct is not None:
        kw = {"user": acct.pw_uid, "group": acct.pw_gid, "extra_groups": []}
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "LANG": "C", "TZ": "UTC"}
    res = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, **kw
    )
    if res.returncode != 0:
        raise RuntimeError(
            f"{Path(cmd[0]).name} failed ({res.returncode}): {res.stdout[-2000:]} "
            f"{res.stderr[-2000:]}"
        )


def _wait_accepting(dsn: str, deadline: float) -> None:
    import psycopg

    while True:
        try:
            with psycopg.connect(dsn, connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _binaries(root: Path, acct: pwd.struct_passwd | None) -> Path:
    """The bin folder to run: pgserver's own, or a copy the server account can read."""
    install = pginstall_dir()
    if acct is None or _reachable(install / "bin" / "postgres", acct, stat.S_IROTH | stat.S_IXOTH):
        return install / "bin"
    # the account cannot read the venv: copy the relocatable install, keeping the layout
    # its RPATH ($ORIGIN/../../../pgserver.libs) expects
    copy = root / "pg"
    shutil.copytree(install, copy / "pgserver" / "pginstall", symlinks=True)
    libs = install.parent.parent / "pgserver.libs"
    if libs.is_dir():
        shutil.copytree(libs, copy / "pgserver.libs", symlinks=True)
    for p in [copy, *copy.rglob("*")]:
        os.lchown(p, acct.pw_uid, acct.pw_gid)
    return copy / "pgserver" / "pginstall" / "bin"


def _initdb(bindir: Path, root: Path, acct: pwd.struct_passwd | None, password: str) -> Path:
    data = root / "data"
    pwfile = root / "pwfile"
    pwfile.write_text(password + "\n")
    if acct is not None:
        os.chown(pwfile, acct.pw_uid, acct.pw_gid)
    try:
        _run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                SUPERUSER,
                f"--pwfile={pwfile}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--no-sync",
                "--no-instructions",
            ],
            acct,
            root,
            timeout=120,
        )
    finally:
        pwfile.unlink()
    return data


def start_server(tmpdir: Path | str) -> PgServer:
    """initdb + start a server on 127.0.0.1:<free port>; returns it (call .stop())."""
    import psycopg

    acct = _os_account()
    base = Path(tmpdir)
    base.mkdir(parents=True, exist_ok=True)
    if acct is not None and not _reachable(base, acct, stat.S_IXOTH):
        # pytest's tmp folders are 0700 root; use a fresh folder under the system tmp
        base = Path(tempfile.gettempdir())
    root = Path(tempfile.mkdtemp(prefix="indexcheck-pg-", dir=base))
    if acct is not None:
        os.chown(root, acct.pw_uid, acct.pw_gid)
    logfile = root / "server.log"
    data = root / "data"
    ctl = ""
    started = False

    def stop() -> None:
        nonlocal started
        if started:
            started = False
            try:
                _run([ctl, "-D", str(data), "-w", "-t", "30", "-m", "fast", "stop"], acct, root, 60)
            except (RuntimeError, subprocess.TimeoutExpired):
                _kill_postmaster(data)
        shutil.rmtree(root, ignore_errors=True)

    try:
        bindir = _binaries(root, acct)
        ctl = str(bindir / "pg_ctl")
        password = secrets.token_hex(12)
        data = _initdb(bindir, root, acct, password)
        for attempt in range(3):  # the free port may be taken before the server binds it
            port = free_port()
            opts = (
                f"-h 127.0.0.1 -p {port} -c unix_socket_directories='' -c fsync=off "
                "-c full_page_writes=off -c synchronous_commit=off -c max_connections=40 "
                "-c shared_buffers=32MB"
            )
            cmd = [ctl, "-D", str(data), "-w", "-t", "60", "-l", str(logfile), "-o", opts]
            started = True  # from here on stop() must try pg_ctl stop
            try:
                _run([*cmd, "start"], acct, root, timeout=90)
                break
            except RuntimeError:
                _kill_postmaster(data)
                if attempt == 2:
                    raise
        server = PgServer("127.0.0.1", port, SUPERUSER, password, DBNAME, root, stop)
        admin = server.dsn.rsplit("/", 1)[0] + "/postgres"
        _wait_accepting(admin, time.monotonic() + 30)
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DBNAME}")
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except BaseException as err:
        log = logfile.read_text()[-3000:] if logfile.exists() else ""
        stop()
        raise RuntimeError(f"could not start the test PostgreSQL server: {err}\n{log}") from err
    atexit.register(stop)
    return server


def _kill_postmaster(data: Path) -> None:
    """Last resort when pg_ctl stop fails: SIGTERM then SIGKILL the postmaster by its pid."""
    import signal

    try:
        pid = int((data / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        for _ in range(50):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def start_postgres(tmpdir: Path | str) -> tuple[str, Callable[[], None]]:
    """Start a server; returns ``(dsn, stop)``. The DSN holds the superuser password."""
    server = start_server(tmpdir)
    return server.dsn, server.stop


_shared: PgServer | None = None


def shared_server() -> PgServer:
    """One server per test process, started on first use and stopped at exit."""
    global _shared
    if _shared is None:
        _shared = start_server(tempfile.gettempdir())
    return _shared


def stop_shared_server() -> None:
    global _shared
    if _shared is not None:
        _shared.stop()
        _shared = None


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """Session fixture: the process-wide test server, stopped at the end of the session."""
    server = shared_server()
    try:
        yield server
    finally:
        stop_shared_server()


def database(server: PgServer, name: str) -> str:
    """A DSN for database ``name`` on the test server, created with pgvector on first use.

    One database per mode: ``langchain_pg_embedding.id`` is unique across collections, so
    the same chunk ids cannot live in two builds of one database."""
    import psycopg

    with psycopg.connect(server.dsn, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    dsn = server.dsn.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return dsn
