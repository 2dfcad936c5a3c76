"""One window per index: a second ``quire-app`` on the same index hands its folders to the window already open,
which comes to the front, and exits.

Two windows on one index would each run their own indexer and folder watcher over the same files, and a user who
starts the app from a launcher while it is open (most often on another workspace) expects the open window back, as
with any desktop application. The first window holds a lock file beside the index (``QLockFile``, which frees the
lock of a process that died) and listens on a local socket named after the index; a later one that cannot take the
lock sends its paths there.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import logging
from pathlib import Path

from PySide6.QtCore import QDeadlineTimer, QLockFile, QObject, QThread, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

# How long a second window waits for the first one's socket: the first may still be starting (its lock is taken
# before its window is built).
CONNECT_TIMEOUT_MS = 5_000
RETRY_MS = 100
# A message is one JSON line; a peer that sends nothing within this long is dropped.
READ_TIMEOUT_MS = 2_000


def server_name(index_dir: Path) -> str:
    """The local socket's name for ``index_dir``: one per user and index (socket names share one namespace per
    machine on Unix)."""
    key = f"{getpass.getuser()}\0{index_dir.expanduser().resolve()}"
    return "quire-" + hashlib.sha256(key.encode()).hexdigest()[:20]


def lock_path(index_dir: Path) -> Path:
    """The lock file beside the index folder (inside it would be removed with a damaged index)."""
    index_dir = index_dir.expanduser().resolve()
    return index_dir.with_name(index_dir.name + ".window.lock")


class Primary(QObject):
    """The first window's claim on an index: holds the lock and receives what later windows hand over."""

    # paths (folders and files) a later ``quire-app`` was started with; empty when it was started without any
    handed_over = Signal(list)

    def __init__(self, index_dir: Path, lock: QLockFile | None) -> None:
        super().__init__()
        self._lock = lock
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        name = server_name(index_dir)
        QLocalServer.removeServer(name)  # a socket file left by a window that crashed: the lock says it is gone
        if not self._server.listen(name):
            log.warning("later windows cannot hand over to this one: %s", self._server.errorString())
        self._server.newConnection.connect(self._accept)

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)
            if socket.canReadLine():
                self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        if not socket.canReadLine():
            return
        try:
            message = json.loads(bytes(socket.readLine().data()).decode("utf-8"))
            paths = [str(p) for p in message.get("paths", [])]
        except (ValueError, AttributeError, TypeError) as e:
            log.warning("ignored a malformed hand-over from another window: %s", e)
            return
        finally:
            socket.disconnectFromServer()
        self.handed_over.emit(paths)

    def release(self) -> None:
        """Stop listening and free the lock (the window is closing)."""
        self._server.close()
        if self._lock is not None:
            self._lock.unlock()


def claim(index_dir: Path) -> Primary | None:
    """This process's claim on ``index_dir``: a :class:`Primary` when no other window has the index open, None when
    one has (then :func:`hand_over` reaches it)."""
    path = lock_path(index_dir)
    lock = QLockFile(str(path))
    lock.setStaleLockTime(0)  # held for the window's lifetime: only a dead holder makes it stale
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        locked = lock.tryLock(0)
    except OSError as e:
        locked, error = False, str(e)
    else:
        error = "" if locked or lock.error() == QLockFile.LockError.LockFailedError else lock.error().name
    if error:  # a folder this user may not write (a read-only index): a window opens, unguarded, as before
        log.warning("cannot lock %s (%s): a second window on this index will not be noticed", path, error)
        return Primary(index_dir, None)
    return Primary(index_dir, lock) if locked else None


def hand_over(index_dir: Path, paths: list[str]) -> bool:
    """Send ``paths`` to the window open on ``index_dir`` and ask it to come to the front; False when it could not
    be reached."""
    socket = QLocalSocket()
    deadline = QDeadlineTimer(CONNECT_TIMEOUT_MS)
    while True:  # a window that took the lock a moment ago may not be listening yet
        socket.connectToServer(server_name(index_dir))
        if socket.waitForConnected(max(deadline.remainingTime(), 0)):
            break
        if deadline.hasExpired():
            return False
        QThread.msleep(RETRY_MS)
    line = json.dumps({"paths": [str(Path(p).expanduser().resolve()) for p in paths]}) + "\n"
    socket.write(line.encode("utf-8"))
    sent = socket.waitForBytesWritten(READ_TIMEOUT_MS)
    socket.waitForDisconnected(READ_TIMEOUT_MS)  # the window read it: it hangs up
    return sent
