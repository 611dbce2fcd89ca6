"""A test judged on the runs that finish cannot be earned by not finishing.

The tests of the tree and of the time in ``scatter_any_root``, ``ring_reduction`` and
``grid_alltoall`` skip the cases on which a program crashes (one bug, one deduction).
A program that crashes on every p but 1, where nothing is sent, once earned them: a
direct scatter that yields a hand-built ``Send`` with a NaN size scored 0 + 2 + 3
instead of the honest direct scatter's 4 + 0 + 0 (found by
``tests/exercises/test_adversarial_records.py``). ``check_enough_finished`` now asks
that at least half of the cases with p >= 2 finished. Here each hidden test cell runs,
as autograde runs it, on a program that is right for p = 1 and crashes otherwise.
"""
import textwrap

import nbformat
import pytest

import nbgrader_harness as h
from collective_lib.grading import check_enough_finished
from messages import flat

ONLY_P1 = {
    "halving_scatter": "(me, p, data, root=0)",
    "my_all_to_all_red_ring": "(me, p, data, op=None)",
    "grid_all_to_all": "(me, p, data, k=2, d=1)",
}

# (assignment, the solution cell, the program's name, the graded cells judged on finished runs)
CELLS = [
    ("scatter_any_root", "scatter_solution", "halving_scatter", "tree_tests"),
    ("scatter_any_root", "scatter_solution", "halving_scatter", "time_tests"),
    ("ring_reduction", "program_solution", "my_all_to_all_red_ring", "time_tests"),
    ("grid_alltoall", "grid_solution", "grid_all_to_all", "time_tests"),
]


def _only_p1(name: str) -> str:
    """A program of ``name`` that returns its own data at p = 1 and crashes on any other p."""
    return textwrap.dedent(f'''
        def {name}{ONLY_P1[name]}:
            if p > 1:
                raise ValueError("not written for p > 1")
            if False:
                yield
            return data[0]
    ''')


def _run_cells(assignment: str, solution_cell: str, program: str, graded_cell: str) -> None:
    """Run the notebook's set-up cells, ``program`` for the solution cell, then ``graded_cell``."""
    nb = nbformat.read(h.EXERCISES_DIR / "source" / assignment / f"{assignment}.ipynb",
                       as_version=4)
    namespace = {}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type != "code" or cell.metadata.get("nbgrader", {}).get("grade"):
            continue
        exec(program if grade_id == solution_cell else cell.source, namespace)
    exec(h.find_cell(nb, graded_cell).source, namespace)


@pytest.mark.parametrize("assignment, solution_cell, name, graded_cell", CELLS)
def test_a_program_that_finishes_only_for_p_1_earns_nothing(assignment, solution_cell, name,
                                                            graded_cell):
    with pytest.raises(AssertionError) as failure:
        _run_cells(assignment, solution_cell, _only_p1(name), graded_cell)
    text = " ".join(flat(failure.value).split())
    assert f"the runs that finish, and {name} finished on 0 of the" in text, text
    assert "too few to judge" in text


@pytest.mark.parametrize("assignment, solution_cell, name, graded_cell", CELLS)
def test_the_solution_passes_the_same_cells(assignment, solution_cell, name, graded_cell):
    nb = nbformat.read(h.EXERCISES_DIR / "source" / assignment / f"{assignment}.ipynb",
                       as_version=4)
    _run_cells(assignment, solution_cell, h.find_cell(nb, solution_cell).source, graded_cell)


# Programs that finish at once in time 0, their results wrong: the time once counted every run
# that finishes, whatever its results, and gave them its points (the audit of the ninth round).
STUBS = {
    "halving_scatter": "return data[me] if data is not None else None",
    "grid_all_to_all": "return data",
}
# (assignment, the solution cell, the program's name, what the message says the stub lacked)
TIMED = [
    ("scatter_any_root", "scatter_solution", "halving_scatter",
     "for p = 8, root 0 the root sent 0 words of the messages, but the (p - 1) n = 21 words "
     "of the other PEs' messages must leave it."),
    ("grid_alltoall", "grid_solution", "grid_all_to_all",
     "for k = 3, d = 2 the message of PE 0 for PE 1 never reached PE 1 (nor did 71 other "
     "messages)."),
]


@pytest.mark.parametrize("assignment, solution_cell, name, lacked", TIMED)
def test_a_stub_that_finishes_in_time_0_earns_no_time(assignment, solution_cell, name, lacked):
    stub = f"def {name}{ONLY_P1[name]}:\n    {STUBS[name]}\n    yield\n"
    with pytest.raises(AssertionError) as failure:
        _run_cells(assignment, solution_cell, stub, "time_tests")
    text = " ".join(flat(failure.value).split())
    assert (f"the runs that finish with messages that carry the data, and {name} did so on 0 "
            f"of the") in text, text
    assert lacked in text, text
    assert text.endswith("Its results cannot be right then (see the correctness test), so "
                         "the time it shows says nothing."), text


def _program(me, p):
    yield from ()


@pytest.mark.parametrize("finished, tried, passes", [
    ([1, 2, 3, 4], [1, 2, 3, 4], True),
    ([2], [1, 2, 3], True),                 # half of the p >= 2: one bug, one deduction
    ([1, 2], [1, 2, 3, 4], False),          # one of three
    ([1, 1, 1], [1, 1, 1, 5], False),       # p = 1 shows nothing
    ([1], [1], False),                      # nothing to judge at all
])
def test_check_enough_finished_counts_the_cases_with_p_at_least_2(finished, tried, passes):
    if passes:
        check_enough_finished(_program, finished, tried, "the time", "the correctness test")
        return
    with pytest.raises(AssertionError, match="the time is measured on the runs that finish, "
                                             "and _program\nfinished on"):
        check_enough_finished(_program, finished, tried, "the time", "the correctness test")


def test_check_enough_finished_says_what_the_messages_lacked():
    # runs that finished but carried too little are not counted, and the first one with
    # p >= 2 says why; where enough counted, they cost nothing
    short = [(1, "for p = 1 nothing"), (4, "for p = 4 no message left PE 0")]
    with pytest.raises(AssertionError) as failure:
        check_enough_finished(_program, [2], [2, 4, 4], "the time", "the correctness test",
                              short=short)
    # written with its own breaks, the message is wrapped to Validate's width: a broken
    # sentence flows on, a line that ends one (or opens a list) keeps its break
    assert str(failure.value) == (
        "the time is measured on the runs that finish with messages that\ncarry the data, and "
        "_program did so on 1 of the 3 cases with p >= 2:\nfor p = 4 no message left PE 0.\n"
        "Its results cannot be right then (see the correctness test), so the time it\nshows "
        "says nothing.")
    assert failure.value.kind == "too_few_finished"
    check_enough_finished(_program, [2, 4], [2, 4, 4], "the time", "the correctness test",
                          short=short)
