"""A student's side of an assignment, set up as README "Running a course" tells a student.

The student's configuration is made by running the README's ``student-setup``
block verbatim in a scratch home directory (:func:`nbgrader_harness.student_config`).
With it:

* ``nbgrader validate`` (what the *Validate* button runs, outside the course
  directory) prints every line whole, where nbgrader by default cuts each at 90
  characters (a failed check's message fits that width too, wrapped); and a failed
  check shows its message alone, as autograde does, with no frame of the grading
  library or the test cell;
* the student's Jupyter loads the student's nbgrader tools (the assignment list,
  *Validate*) but not the instructor's (formgrader, the course list, *Create
  Assignment*).
"""
from __future__ import annotations

import subprocess
import sys

import pytest

import nbgrader_harness as h

ASSIGNMENT = "reverse_send_order"
SOLUTION_CELL = "smallest_first_solution"

# Right for one PE; for more, every PE first waits for its right neighbour: a deadlock,
# whose message (which p, which root, who waits for whom, a hint) runs past 90 characters.
DEADLOCKS_FROM_P2 = '''
if p == 1:
    return data
data = yield recv((me + 1) % p)
yield send((me - 1) % p, data)
return data
'''

STUDENT_TOOLS = ("nbgrader.server_extensions.assignment_list",
                 "nbgrader.server_extensions.validate_assignment")
INSTRUCTOR_TOOLS = ("nbgrader.server_extensions.formgrader",
                    "nbgrader.server_extensions.course_list")
INSTRUCTOR_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:course-list")
STUDENT_PLUGINS = ("@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:validate-assignment",
                   "@jupyter/nbgrader:menu")
NEWS = "@jupyterlab/apputils-extension:announcements"


@pytest.fixture(scope="module")
def student_config(tmp_path_factory):
    """The Jupyter configuration directory README's student setup writes for alice."""
    return h.student_config(tmp_path_factory.mktemp("student") / "home", "alice")


@pytest.fixture(scope="module")
def wrong_submission(tmp_path_factory):
    """The released notebook with a deadlocking answer, as the student saved it."""
    course = h.released_copy(tmp_path_factory.mktemp(ASSIGNMENT) / "course", ASSIGNMENT)
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    source = h.source_notebook(course, ASSIGNMENT, f"{ASSIGNMENT}.ipynb")
    return h.answered_release(released, h.replace_solution(source, SOLUTION_CELL,
                                                           DEADLOCKS_FROM_P2))


def _messages(nb) -> dict[str, str]:
    """``{grade_id: message}`` of the graded cells of ``nb`` that fail, run in this process.

    Each test cell runs after the answer cell, as in the notebook: the message is the
    AssertionError's whole text, which the grading library made.
    """
    answer = next(c.source for c in nb.cells
                  if c.metadata.get("nbgrader", {}).get("grade_id") == SOLUTION_CELL)
    messages = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade"):
            continue
        namespace = {"__name__": "__main__"}
        exec(compile(answer, "<answer>", "exec"), namespace)
        try:
            exec(compile(cell.source, f"<{meta['grade_id']}>", "exec"), namespace)
        except AssertionError as err:
            messages[meta["grade_id"]] = str(err)
    return messages


def _unindented(report: str) -> str:
    """A validate report without the indent nbgrader puts before every line it quotes."""
    return "\n".join(line[4:] if line.startswith("    ") else line
                     for line in report.splitlines())


@pytest.fixture(scope="module")
def validated(wrong_submission, student_config, tmp_path_factory):
    """``(messages, with the student's configuration, with none)``: what validate printed."""
    messages = _messages(wrong_submission)
    folder = tmp_path_factory.mktemp("validate")
    configured = h.validate(wrong_submission, folder / "configured", f"{ASSIGNMENT}.ipynb",
                            config_dir=student_config)
    bare = h.validate(wrong_submission, folder / "bare", f"{ASSIGNMENT}.ipynb")
    return messages, configured, bare


def test_the_wrong_answer_fails_with_long_messages_wrapped_to_validates_width(validated):
    messages, _, _ = validated
    assert set(messages) == {"correctness_tests", "time_tests"}, messages
    first = messages["correctness_tests"]
    assert first.startswith("deadlock in binomial_broadcast_smallest_first for p="), first
    assert "no PE can go on" in first and "Hint: " in first
    # over 90 characters unwrapped; each line fits after "AssertionError: " and the indent
    assert len(" ".join(first.split("\n"))) > 90
    head, *rest = first.split("\n")
    assert len(head) <= 64 and rest and max(map(len, rest)) <= 80, first


def test_validate_with_the_students_setup_shows_the_messages_whole(validated):
    messages, configured, _ = validated
    assert not configured.passed
    report = _unindented(configured.text)
    for grade_id, message in messages.items():
        assert f"AssertionError: {message}" in report, (grade_id, configured.text)


def test_without_it_validate_shows_them_whole_too(validated):
    """nbgrader's default width (90: the indent, 83 characters of a line, "...") cut the
    long lines of these messages once; now each fits, and a self-learner without the
    course's setup reads them whole as well."""
    messages, _, bare = validated
    report = _unindented(bare.text)
    assert not bare.passed
    assert not bare.cut_lines, bare.cut_lines
    for grade_id, message in messages.items():
        assert f"AssertionError: {message}" in report, (grade_id, bare.text)


def test_the_traceback_has_no_frame_of_the_grading_library(validated):
    _, configured, bare = validated
    for result in (configured, bare):
        assert "collective_lib/grading" not in result.text, result.text
        assert "skipping hidden" not in result.text
        # each failed cell's traceback names the student's notebook cell, and only
        # that (the kernel's own log at shutdown is not a cell's error: ValidateResult)
        # the two test cells fail with a traceback; the written answer is missing
        *tracebacks, unanswered = result.errors
        assert len(tracebacks) == 2 and "did not provide" in unanswered, result.text
        # a failed check shows its message alone, as autograde does: no frame of the test
        # cell either (its code says less, and Validate cut its lines)
        for error in tracebacks:
            assert error.lstrip().startswith("AssertionError: "), error
            assert not any(line.strip().startswith(("File ", "Cell In[", "Traceback"))
                           for line in error.splitlines()), error


def test_the_students_jupyter_has_the_students_tools_only(student_config):
    loaded = h.jupyter_extensions(student_config)
    for module in INSTRUCTOR_TOOLS:
        assert loaded.server.get(module) is False, (module, loaded.server)
    for module in STUDENT_TOOLS:
        assert loaded.server.get(module) is True, (module, loaded.server)
    assert set(INSTRUCTOR_PLUGINS) <= set(loaded.lab_disabled), loaded.lab_listing
    assert not set(STUDENT_PLUGINS) & set(loaded.lab_disabled), loaded.lab_listing
    # JupyterLab's question about Jupyter's news, over the notebook a student opens first
    assert NEWS in loaded.lab_disabled, loaded.lab_listing


def test_without_the_setup_jupyter_has_the_instructors_tools(tmp_path):
    """The measure before: nbgrader's installation turns every tool on for everybody."""
    empty = tmp_path / "jupyter-config"
    empty.mkdir()
    loaded = h.jupyter_extensions(empty)
    for module in (*INSTRUCTOR_TOOLS, *STUDENT_TOOLS):
        assert loaded.server.get(module) is True, (module, loaded.server)
    assert not loaded.lab_disabled, loaded.lab_listing


def test_the_setup_keeps_what_the_student_wrote_before(tmp_path):
    """After the student's own settings, the setup only adds its lines."""
    home = tmp_path / "home"
    (home / ".jupyter").mkdir(parents=True)
    (home / ".jupyter" / "jupyter_server_config.py").write_text("c.ServerApp.port = 9999\n")
    config = h.student_config(home, "bob")
    assert "c.ServerApp.port = 9999" in (config / "jupyter_server_config.py").read_text()
    nbgrader_config = (config / "nbgrader_config.py").read_text()
    assert "c.CourseDirectory.student_id = 'bob'" in nbgrader_config
    loaded = h.jupyter_extensions(config)
    assert loaded.server["nbgrader.server_extensions.formgrader"] is False


IPYTHON_SESSION = '''\
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance(colors="nocolor")
shell.run_cell("from collective_lib.grading import guarded_call")
shell.run_cell("def half(n):\\n    return n / 0")
shell.run_cell("guarded_call(half, 4)")
print("=" * 20)
shell.set_custom_exc((), None)           # the handler the grading library installed, gone
shell.run_cell("guarded_call(half, 4)")
'''


OWN_ASSERT_SESSION = IPYTHON_SESSION.replace("guarded_call", "noting").replace(
    "def half(n):\\n    return n / 0", "def mine(me, p, data):\\n    assert data, 'my own'"
).replace("noting(half, 4)", "noting(mine, {})(0, 1, [])")


def test_in_ipython_another_assertion_error_keeps_the_students_frames_only():
    """A student's own assert that fails in code a check ran: the student's cell and
    function, and no frame of the grading library (IPython shows them by itself)."""
    proc = subprocess.run([sys.executable, "-c", OWN_ASSERT_SESSION], capture_output=True,
                          text=True, timeout=120, check=True)
    hidden, shown = proc.stdout.split("=" * 20)
    for text in (hidden, shown):
        assert "AssertionError: my own" in text and "----> 1 noting(mine" in text, text
        assert "assert data, 'my own'" in text, text
    assert "collective_lib/grading" not in hidden, hidden
    assert "collective_lib/grading/isolation.py" in shown, shown


def test_in_ipython_a_failed_check_shows_its_message_alone():
    """A failed check in IPython: its message, which names the student's line, and no
    frame (neither the library's nor the cell's), with or without the handler that
    hides the library's frames of other errors."""
    proc = subprocess.run([sys.executable, "-c", IPYTHON_SESSION], capture_output=True,
                          text=True, timeout=120, check=True)
    message = ("AssertionError: half(4) raised ZeroDivisionError: division by zero\n"
               "  at line 2 of half: `return n / 0`")
    for text in proc.stdout.split("=" * 20):
        assert text.strip() == message, text
