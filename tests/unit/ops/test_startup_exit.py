"""Start-up and exit of the command: the collector pause and the exit without teardown."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

from replicator.ops import startup_gc


def test_collector_resumed_only_when_paused_by_the_start_up() -> None:
    assert gc.isenabled()
    try:
        startup_gc.pause()
        assert not gc.isenabled()
        startup_gc.resume()
        assert gc.isenabled()
        startup_gc.resume()  # a second resume changes nothing
        assert gc.isenabled()
        gc.disable()  # disabled by someone else: neither pause nor resume turns it on
        startup_gc.pause()
        startup_gc.resume()
        assert not gc.isenabled()
    finally:
        gc.enable()


def _console(body: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run console_main with ``main`` replaced by ``body`` (a function body returning the code)."""
    script = textwrap.dedent("""
        import atexit, sys
        import replicator.cli as cli
        def fake_main():
        {body}
        cli.main = fake_main
        sys.exit(cli.console_main())
    """).format(body=textwrap.indent(textwrap.dedent(body), "    "))
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60)


def test_console_exit_runs_atexit_handlers_flushes_and_keeps_the_code() -> None:
    done = _console("""
        atexit.register(lambda: print("atexit handler ran"))
        sys.stdout.write("x" * 100000)  # buffered: a pipe is not a TTY
        sys.stderr.write("on stderr\\n")
        return 3
    """)
    assert done.returncode == 3
    assert done.stdout.startswith("x" * 100000) and done.stdout.endswith("atexit handler ran\n")
    assert "on stderr" in done.stderr


def test_console_exit_waits_for_a_non_daemon_thread() -> None:
    done = _console("""
        import threading
        def late():
            threading.main_thread().join()  # finishes only after the main thread has ended
            print("thread finished")
        threading.Thread(target=late).start()
        return 0
    """)
    assert done.returncode == 0
    assert done.stdout == "thread finished\n"
