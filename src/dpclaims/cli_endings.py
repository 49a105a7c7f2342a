"""How a command ends: SIGTERM unwound like Ctrl-C (exit 143), and a reader of stdout
that has gone (``| head``) ending the command quietly with the exit code it earned.
Shared by :mod:`dpclaims.cli` and :mod:`dpclaims.cli_data`."""

from __future__ import annotations

import contextlib
import os
import signal
import sys

import click
from rich.console import Console


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (``kill``, ``timeout``, a CI cancelling the job): unwinds like Ctrl-C,
    so that the staging folder and the lock are removed, and exits 143."""


@contextlib.contextmanager
def _sigterm_raises():
    """While a command runs: SIGTERM raises :class:`Terminated` in this process. A process
    forked from it (a check, an audit's worker) dies of the signal quietly instead, as
    without the handler, and leaves the one line to this process, which passes the
    signal on to its multiprocessing children (a pool would wait for its workers' tasks
    otherwise). The previous handler
    is restored at the end (the CLI may run inside another program, e.g. the tests)."""
    main_pid = os.getpid()

    def handler(signum, frame):
        if os.getpid() != main_pid:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        mp = sys.modules.get("multiprocessing")
        if mp is not None:  # a pool's workers would otherwise finish their tasks first
            for child in mp.active_children():
                child.terminate()
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave SIGTERM alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _earned(code: int) -> None:
    """Record the exit code the command has earned before it prints its results: if the
    reader of stdout has gone (``| head``), the command ends with this code, quietly."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.find_root().ensure_object(dict)["earned"] = code


def _stdout_closed(exc: BaseException) -> bool:
    """Whether ``exc`` is a write to a closed stdout (EPIPE), not another broken pipe."""
    import errno

    if getattr(exc, "stdout_gone", False):  # from _Console (also when run as __main__)
        return True
    if not (isinstance(exc, BrokenPipeError)
            or (isinstance(exc, OSError) and exc.errno in (errno.EPIPE, errno.EINVAL))):
        return False
    try:
        os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return True
    import select

    try:  # a pipe whose reader has closed is "readable" (POLLERR) to its writer
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLERR)
        return any(ev & select.POLLERR for _, ev in poll.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _silence_stdout() -> None:
    """Send the rest of stdout to /dev/null (the Python docs' recipe for SIGPIPE): the
    interpreter's flush at exit then has nowhere to fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _flush_stdout() -> None:
    """Flush stdout now, so that a closed pipe is noticed here (quietly) and not at the
    interpreter's exit ("Exception ignored ... BrokenPipeError", exit 120)."""
    try:
        sys.stdout.flush()
    except (BrokenPipeError, OSError, ValueError):
        _silence_stdout()


class _Console(Console):
    """A rich Console for stdout whose write to a closed pipe raises BrokenPipeError marked
    ``stdout_gone`` (then :class:`_Main` exits with the earned code; stdout is /dev/null
    by then) instead of rich's own exit 1."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        _silence_stdout()
        exc = BrokenPipeError(32, "Broken pipe")
        exc.stdout_gone = True
        raise exc


