"""Hostile submissions against the limits of a whole submission and its private file system.

Built, as in test_adversarial.py, from the released notebook of ``gray_codes``
and graded in one ``nbgrader autograde`` run beside an honest submission:

* ``mem_forks``: one call forks three children that each hold as much as one
  process may (about 1.2 GiB, under the per-process address-space limit):
  together they pass the 2 GiB of one submission;
* ``mem_tmpfs``: one call fills its private /tmp and /dev/shm: each holds 64 MiB
  (what they hold counts in the submission's memory and belongs to no process, so
  the kernel cannot take it back by stopping one: a file system as large as the
  submission's memory let one submission crowd out the processes of another graded
  beside it), and the call fails with the student's own "No space left on device";
* ``fork_bomb``: one call forks until it may not;
* ``leak_planter`` writes a marker into every directory of the machine it can
  write to, and ``leak_seeker``, graded after it, looks for markers everywhere.

Each hostile call scores zero with the reason, the other parts of the same
submission are still graded (part (ii) and (iii) run with a correct part (i)),
the honest submission keeps full marks, the planter wrote only into places of
its own, the seeker found nothing, and no marker is left on the machine.
"""

import json
import os
import textwrap

import nbformat
import pytest

import nbgrader_harness as h

ASSIGNMENT = "gray_codes"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
MARKER = "collective-leak-marker"
PRIVATE = ("/tmp", "/var/tmp", "/dev/shm")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox needs root")

GRAY_OF = '''
def gray_of(i):
    return i ^ (i >> 1)
'''

CORRECT = GRAY_OF + '''

def gray_rank(g):
    i = 0
    while g:
        i ^= g
        g >>= 1
    return i
'''

# gray_rank(g) forks three children that each take what one process may (1.2 GiB, or as
# much under its address-space limit), filled at once (MAP_POPULATE), and waits for them
MEM_FORKS = GRAY_OF + '''
import mmap, os, time

def gray_rank(g):
    children = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            size = 1200 << 20
            while size:
                try:
                    held = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                                     | mmap.MAP_POPULATE)
                    break
                except OSError:
                    size -= 64 << 20
            time.sleep(60)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    i = 0
    while g:
        i ^= g
        g >>= 1
    return i
'''

# gray_rank(g) writes files of 1 MiB (the file-size limit) into its private /tmp and
# /dev/shm until it cannot
MEM_TMPFS = GRAY_OF + '''
def gray_rank(g):
    block = bytes(1 << 20)
    for n in range(10_000):
        with open(f"{('/tmp', '/dev/shm')[n % 2]}/fill-{n}", "wb") as handle:
            handle.write(block)
    return n
'''

FORK_BOMB = GRAY_OF + '''
import os, time

def gray_rank(g):
    while True:
        try:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        except OSError:
            time.sleep(60)
'''

# at the top of its cell (each of its processes runs it): a marker into every directory
# it may write to; gray_of reports where it succeeded
PLANTER = CORRECT + f'''
import json, os

PLANTED = []
for top, dirs, files in os.walk("/"):
    if top in ("/proc", "/sys"):
        dirs[:] = []
        continue
    try:
        open_to_all = os.stat(top).st_mode & 0o002
    except OSError:
        continue
    if open_to_all or os.access(top, os.W_OK):
        try:
            with open(os.path.join(top, {MARKER!r}), "w") as handle:
                handle.write("left by leak_planter")
            PLANTED.append(top)
        except OSError:
            pass

def gray_of(i):
    raise RuntimeError("PLANTED " + json.dumps(sorted(PLANTED)))
'''

# graded after the planter: looks for its markers in every directory it can list
SEEKER = CORRECT + f'''
import json, os

FOUND = []
for top, dirs, files in os.walk("/"):
    if top in ("/proc", "/sys"):
        dirs[:] = []
        continue
    if {MARKER!r} in files:
        try:
            FOUND.append([top, open(os.path.join(top, {MARKER!r})).read()])
        except OSError as err:
            FOUND.append([top, str(err)])

def gray_of(i):
    raise RuntimeError("FOUND " + json.dumps(FOUND))
'''

MEMORY_REASON = ("your processes together used more than 2 GiB of memory (the limit for one "
                 "submission) and were stopped")
PROCESSES_REASON = ("your processes together tried to run more than 64 processes or threads "
                    "at once (the limit for one submission) and were stopped")


def _with_cell(nb, grade_id, source):
    """A copy of ``nb`` whose cell ``grade_id`` holds ``source`` (a student's edit)."""
    nb = nbformat.from_dict(nb)
    h.find_cell(nb, grade_id).source = textwrap.dedent(source).strip("\n")
    return nb


def _payloads(course, source):
    released = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    answered = h.answered_release(released, source)        # parts (ii) and (iii) right
    payloads = {"honest": answered}
    for student, code in (("mem_forks", MEM_FORKS), ("mem_tmpfs", MEM_TMPFS),
                          ("fork_bomb", FORK_BOMB), ("leak_planter", PLANTER),
                          ("leak_seeker", SEEKER)):
        payloads[student] = _with_cell(answered, "gray_solution", code)
    return payloads


def _world_writable() -> list:
    """The world-writable directories of this machine (not /proc, /sys)."""
    found = []
    for top, dirs, _ in os.walk("/"):
        if top in ("/proc", "/sys"):
            dirs[:] = []
            continue
        try:
            if os.stat(top).st_mode & 0o002:
                found.append(top)
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = h.released_copy(tmp_path_factory.mktemp("limits") / "course", ASSIGNMENT)
    source = h.source_notebook(course, ASSIGNMENT, NOTEBOOK)
    return course, h.autograde_many(course, ASSIGNMENT, _payloads(course, source))


def _parts_ii_and_iii_graded(result):
    for part in ("transitions_tests", "index_tests"):
        assert result.scores[part] == result.max_scores[part], (part, result.messages(part))


def test_the_honest_submission_keeps_full_marks(graded):
    _, results = graded
    h.assert_full_marks(results["honest"])


def test_memory_of_a_whole_submission_is_limited_with_the_reason(graded):
    _, results = graded
    result = results["mem_forks"]
    assert result.scores["gray_tests"] == 0
    text = result.messages("gray_tests")
    assert "gray_rank(5) raised RuntimeError: " + MEMORY_REASON in text, text
    _parts_ii_and_iii_graded(result)


def test_the_private_file_systems_are_small(graded):
    _, results = graded
    result = results["mem_tmpfs"]
    assert result.scores["gray_tests"] == 0
    text = result.messages("gray_tests")
    assert "gray_rank(5) raised OSError: [Errno 28] No space left on device" in text, text
    _parts_ii_and_iii_graded(result)


def test_a_fork_bomb_is_stopped_at_the_submissions_processes(graded):
    _, results = graded
    result = results["fork_bomb"]
    assert result.scores["gray_tests"] == 0
    text = result.messages("gray_tests")
    assert "gray_rank(5) raised RuntimeError: " + PROCESSES_REASON in text, text
    _parts_ii_and_iii_graded(result)


def _reported(result, word):
    text = result.messages("gray_tests")
    start = text.index(word + " ") + len(word) + 1
    return json.JSONDecoder().raw_decode(text[start:])[0]


def test_a_submission_writes_only_into_places_of_its_own(graded):
    _, results = graded
    planted = _reported(results["leak_planter"], "PLANTED")
    assert planted, "the planter could not even write its own /tmp"
    assert {p for p in planted if not p.startswith(PRIVATE)} == set(), planted
    assert set(PRIVATE) <= set(planted)


def test_no_submission_sees_what_another_left(graded):
    _, results = graded
    assert _reported(results["leak_seeker"], "FOUND") == []
    assert results["leak_seeker"].scores["gray_tests"] == 0        # it raised, as it should


def test_nothing_of_a_submission_is_left_on_the_machine(graded):
    _, results = graded
    planted = _reported(results["leak_planter"], "PLANTED")
    left = [folder for folder in set(_world_writable()) | set(planted) | set(PRIVATE)
            if os.path.exists(os.path.join(folder, MARKER))]
    assert left == []
    for folder in ("/tmp", "/dev/shm"):
        assert not [name for name in os.listdir(folder) if name.startswith("fill-")]
