"""Stopping a student's process never stops another's, and no verdict goes missing unexplained.

The student host's children reap themselves, so a student process that died on
its own (its submission's group stopped it when its CPU budget was spent, or it
crashed) leaves its pid free for any new process. Under load, with a few
hundred processes a second and pids that wrap at 32768, the pid went to another
notebook's checker, a session leader, which the old ``kill`` (``killpg`` and
``kill`` by number) then stopped: every graded cell of that notebook came back
"not graded: no verdict" (issue 26, point 7). These tests stage that reuse
directly.
"""
import os
import subprocess
import sys
import time

from codec_pipes import framed_in_a_pipe
from collective_lib.autograde.remote import StudentProcess
from collective_lib.autograde.verdict import TrustedVerdict

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def _stale_handle(pid: int, pidfd: int) -> StudentProcess:
    """The checker's handle of a student process, as ``Host.fork`` left it (without the
    handshake, which needs a student host)."""
    handle = StudentProcess.__new__(StudentProcess)
    read, write = os.pipe()
    handle.pid, handle.pidfd, handle.wfd, handle.rfd = pid, pidfd, write, read
    handle.alive, handle.host = True, None
    return handle


def _gone(process: subprocess.Popen, wait_s: float = 5.0) -> bool:
    try:
        process.wait(wait_s)
        return True
    except subprocess.TimeoutExpired:
        return False


def test_stopping_a_dead_student_process_spares_the_process_that_got_its_pid():
    student = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    pidfd = os.pidfd_open(student.pid)
    student.wait()                                      # dead and reaped: its pid is free
    heir = subprocess.Popen(SLEEPER, start_new_session=True)    # a checker leads its session
    try:
        _stale_handle(heir.pid, pidfd).kill()           # as if the pid had gone to the heir
        assert not _gone(heir, 0.5), "the process that took over the pid was stopped"
    finally:
        heir.kill()
        heir.wait()


def test_stopping_a_live_student_process_stops_it_and_its_group():
    leader = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys, time\n"
         "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
         "print(child.pid, flush=True)\ntime.sleep(60)\n"],
        start_new_session=True, stdout=subprocess.PIPE, text=True)
    child = int(leader.stdout.readline())
    handle = _stale_handle(leader.pid, os.pidfd_open(leader.pid))
    handle.kill()
    assert _gone(leader)
    for _ in range(50):                                 # the child is not ours to reap
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the student's own child outlived its group")
    assert not handle.alive
    for fd in (handle.pidfd, handle.wfd, handle.rfd):   # nothing left open
        try:
            os.fstat(fd)
        except OSError:
            continue
        raise AssertionError(f"descriptor {fd} is still open")


def test_a_checker_that_ends_without_an_answer_says_how_it_ended():
    cells = [{"role": "student", "source": "def answer():\n    return 42", "id": "answer"},
             {"role": "graded", "source": "assert answer() == 42", "id": "first"},
             {"role": "graded", "source": "import os, signal\n"
                                          "os.kill(os.getpid(), signal.SIGKILL)", "id": "end"}]
    verdicts = TrustedVerdict()._check({"cells": cells, "hide": [], "uid": None,
                                        "cell_timeout_s": 60})
    reason = "not graded: the trusted checker stopped without an answer (killed by SIGKILL)"
    assert {gid: v["message"] for gid, v in verdicts.items()} == {"first": reason,
                                                                  "end": reason}


def test_an_answer_the_checker_refuses_is_reported_with_its_reason():
    """A message the checker's codec refuses stops the process, and the call fails with
    the codec's reason, not "its process died (out of memory or CPU time ...)" (a student
    audit: a string of 700,000 commas, whose commas were counted as values)."""
    student = subprocess.Popen(SLEEPER, start_new_session=True)
    handle = _stale_handle(student.pid, os.pidfd_open(student.pid))
    os.close(handle.rfd)
    blob = ("[" + ",".join(["[]"] * 650_000) + "]").encode()        # 650,001 JSON values
    try:
        # the handle closes the read end when it stops the process
        with framed_in_a_pipe(blob, close=False) as handle.rfd:
            reply = handle._reply(time.monotonic() + 30, 0)
        assert reply == {"err": "a value of more than 100,000 items cannot be graded",
                         "type": "Undecodable"}
        assert _gone(student), "the process that sent it was not stopped"
    finally:
        student.kill()
        student.wait()


def test_the_host_template_removes_its_directory_when_its_checker_ends_abruptly():
    """A pytest-xdist worker or a killed grading run ends by ``os._exit``: no atexit
    handler closes the template, which still removes the directory it runs in."""
    script = ("import os; from collective_lib.autograde.remote import HostTemplate; "
              "t = HostTemplate(); print(t.cwd, t.process.pid, flush=True); os._exit(0)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    cwd, pid = out[0], int(out[1])
    deadline = time.monotonic() + 10
    while (os.path.isdir(cwd) or not _ended(pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.isdir(cwd), f"the template's directory {cwd} was left behind"
    assert _ended(pid), f"the template (pid {pid}) outlived its checker"


def _ended(pid: int) -> bool:
    """Whether process ``pid`` is gone or a zombie (its new parent may not reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
