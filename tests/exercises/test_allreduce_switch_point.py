"""nbgrader round trip of `allreduce_switch_point` (chapter 8; Thakur, Rabenseifner, Gropp 2005).

Part (i) derives, from the catalog's closed forms of the ring all-reduce and recursive
doubling, the smallest m at which the ring is strictly faster on one level; part (ii) finds
it by simulating the two catalog entries on a two-level machine, each student's own
(collective_lib.autograde.variants); part (iii) is written. The source notebook is released
(the release must hide solutions and hidden tests), then the solution under two student ids
with different machines, an answer copied from another student's machine, and wrong,
crashing, endless and library-calling submissions are autograded in one nbgrader run.

To stay cheap (the whole module takes about 45 s on a shared 2-core machine), every wrong
submission carries at most one bug per graded cell (the two cells are independent: part (ii)
never calls part (i)), the endless one runs into one time limit (3 s, 4.5 s under the
checker's scale), and Validate sees one notebook with a bug in each part, not the endless one.
"""
from __future__ import annotations

import re

import pytest

import nbgrader_harness as h
from messages import flat
from collective_lib import CostModel, TwoLevel, TwoLevelModel, catalog
from collective_lib.autograde.variants import variant
from exercise_submissions import message_width_test, validate_tests, validated_fixture

ASSIGNMENT = "allreduce_switch_point"
CELLS = ("derive_tests", "simulate_tests")

#: The solution is graded under these ids (besides "solution"), whose machines differ.
SOLUTION_IDS = ("alice",)
COPIER = "copier"

RING = catalog()["ring_allreduce"]
DOUBLING = catalog()["recursive_doubling_allreduce"]


def _machine(student):
    v = variant(ASSIGNMENT, student)
    return TwoLevelModel(inside=CostModel(ts=v.ts_inside, tw=v.tw_inside),
                         between=CostModel(ts=v.ts_between, tw=v.tw_between))


def _other(student):
    """A student whose machine differs from ``student``'s (the one a copier copies from)."""
    return next(s for s in ("solution", "alice", "bob", "carol")
                if _machine(s) != _machine(student))


def _search(sizes="range(p, m_max + 1)", model="MACHINE"):
    """Part (ii) as a student writes it: the sizes tried, in order, on the machine ``model``."""
    return f"""
p = nodes * per_node
network = TwoLevel(nodes, per_node)
for m in {sizes}:
    ring_time = ring.simulate(p, m, model={model}, network=network, trace=False).time
    doubling_time = doubling.simulate(p, m, model={model}, network=network,
                                      trace=False).time
    if ring_time < doubling_time:
        return m
return None
"""


def _copied_solution(source):
    """The solution of part (ii) as another student wrote it, their machine written in."""
    model = _machine(_other(COPIER))
    return h.replace_solution(source, "simulate_solution", f"""
machine = TwoLevelModel(inside=CostModel(ts={model.inside.ts}, tw={model.inside.tw}),
                        between=CostModel(ts={model.between.ts}, tw={model.between.tw}))
""" + _search(model="machine"))


def _two_level_reference(nodes, per_node, m_max, model):
    """Every m from p to m_max, in order, until the simulated ring is strictly faster."""
    p, network = nodes * per_node, TwoLevel(nodes, per_node)
    for m in range(p, m_max + 1):
        if (RING.simulate(p, m, model=model, network=network, trace=False).time
                < DOUBLING.simulate(p, m, model=model, network=network, trace=False).time):
            return m
    return None


# -- the typical bugs of part (i) ---------------------------------------------------------

OFF_BY_ONE = '''
log_p = p.bit_length() - 1
slope = (log_p * p - 2 * (p - 1)) * tw
if slope <= 0:
    return None
c = math.floor((2 * (p - 1) - log_p) * ts / slope) + 1
x = (2 * (p - 1) * (ts + tw * c) - log_p * ts) / (log_p * tw)
return max((c - 1) * p + 1, math.floor(x))        # the last m where the ring still loses
'''

NO_CEILING = '''
log_p = p.bit_length() - 1
slope = log_p - 2 * (p - 1) / p                   # the ring's words as m (p - 1) / p exactly
if slope <= 0:
    return None
return math.floor((2 * (p - 1) - log_p) * ts / (slope * tw)) + 1
'''

AT_LEAST = '''
log_p = p.bit_length() - 1
slope = (log_p * p - 2 * (p - 1)) * tw
if slope <= 0:
    return None
c = math.ceil((2 * (p - 1) - log_p) * ts / slope)   # the ring at least as fast
x = (2 * (p - 1) * (ts + tw * c) - log_p * ts) / (log_p * tw)
return max((c - 1) * p + 1, math.ceil(x))
'''

NATURAL_LOG = '''
log_p = math.log(p)                               # ln p, not log2 p
slope = (log_p * p - 2 * (p - 1)) * tw
if slope <= 0:
    return None
c = math.floor((2 * (p - 1) - log_p) * ts / slope) + 1
x = (2 * (p - 1) * (ts + tw * c) - log_p * ts) / (log_p * tw)
return max((c - 1) * p + 1, math.floor(x) + 1)
'''

DERIVE_WITH_THE_LIBRARY = '''
from collective_lib import selection
for m in range(1, 5000):                          # right on the visible checks' machines
    times = {c.name: c.predicted for c in selection.predict(
        "allreduce", p, m, CostModel(ts=ts, tw=tw),
        among=["ring_allreduce", "recursive_doubling_allreduce"])}
    if times["ring_allreduce"] < times["recursive_doubling_allreduce"]:
        return m
return None
'''

# -- the typical bugs of part (ii) --------------------------------------------------------

WITHOUT_THE_BOUND = '''
p = nodes * per_node
network = TwoLevel(nodes, per_node)
m = p
while True:                                       # never stops where the ring never wins
    ring_time = ring.simulate(p, m, model=MACHINE, network=network, trace=False).time
    doubling_time = doubling.simulate(p, m, model=MACHINE, network=network,
                                      trace=False).time
    if ring_time < doubling_time:
        return m
    m += 1
'''

WITHOUT_THE_NETWORK = '''
p = nodes * per_node
for m in range(p, m_max + 1):                     # a TwoLevelModel needs a TwoLevel network
    ring_time = ring.simulate(p, m, model=MACHINE, trace=False).time
    doubling_time = doubling.simulate(p, m, model=MACHINE, trace=False).time
    if ring_time < doubling_time:
        return m
return None
'''

ONE_LEVEL = '''
p = nodes * per_node
for m in range(p, m_max + 1):                     # the nodes ignored: one level, costs between
    ring_time = ring.simulate(p, m, model=MACHINE.between, trace=False).time
    doubling_time = doubling.simulate(p, m, model=MACHINE.between, trace=False).time
    if ring_time < doubling_time:
        return m
return None
'''

SIMULATE_WITH_THE_LIBRARY = '''
from collective_lib.selection import simulated_winner
p = nodes * per_node
for m in range(p, m_max + 1):
    best = simulated_winner("allreduce", p, m, MACHINE, TwoLevel(nodes, per_node),
                            among=["ring_allreduce", "recursive_doubling_allreduce"])
    if best.name == "ring_allreduce":
        return m
return None
'''

FROM_ONE = _search("range(1, m_max + 1)")              # from 1, not from p: empty blocks
WITHOUT_M_MAX = _search("range(p, m_max)")              # m_max itself is never tried
# From p + 1, not from p (student audit, tenth round): 4 of 4 on the 12 of the 36 machines
# (this student's among them) where no graded case had its answer at m = p itself.
FROM_P_PLUS_ONE = _search("range(p + 1, m_max + 1)")

# Twelfth round (B-F5): the closed forms written, then blocks searched by doubling and
# bisection and m bisected in the winning block: every graded case (4 of 4), unflagged,
# though the task says "Derive it; do not search".
DERIVE_BY_BISECTION = '''
log_p = p.bit_length() - 1
def t_ring(m):
    return 2 * (p - 1) * (ts + tw * (-(-m // p)))
def t_rd(m):
    return log_p * (ts + tw * m)
if p == 2:
    return None
hi = 1
while not t_ring(hi * p) < t_rd(hi * p):
    hi *= 2
lo = hi // 2
while hi - lo > 1:
    mid = (lo + hi) // 2
    lo, hi = (lo, mid) if t_ring(mid * p) < t_rd(mid * p) else (mid, hi)
a, b = (hi - 1) * p, hi * p
while b - a > 1:
    mid = (a + b) // 2
    a, b = (a, mid) if t_ring(mid) < t_rd(mid) else (mid, b)
return b
'''

# A switch point of 10**8 words: the visible check simulated both allreduces there, every
# word of 2 x 10**8 held in the checker, beyond its memory limit (every cell lost).
HUGE_M = '''
return 10 ** 8
'''

#: ``{student: changes}``: one bug per graded cell; the cells are independent.
WRONG = {
    "off_by_one": [("derive_solution", OFF_BY_ONE), ("simulate_solution", WITHOUT_THE_BOUND)],
    "no_ceiling": [("derive_solution", NO_CEILING), ("simulate_solution", WITHOUT_THE_NETWORK)],
    "at_least": [("derive_solution", AT_LEAST), ("simulate_solution", ONE_LEVEL)],
    "natural_log": [("derive_solution", NATURAL_LOG),
                    ("simulate_solution", SIMULATE_WITH_THE_LIBRARY)],
    "library": [("derive_solution", DERIVE_WITH_THE_LIBRARY)],
    "from_one": [("simulate_solution", FROM_ONE)],
    "without_m_max": [("simulate_solution", WITHOUT_M_MAX)],
    "from_p_plus_one": [("simulate_solution", FROM_P_PLUS_ONE)],
    "bisects": [("derive_solution", DERIVE_BY_BISECTION)],
    "huge_m": [("derive_solution", HUGE_M)],
}


def build_submissions(source):
    built = h.submissions(source, WRONG)
    built.update({student: source for student in SOLUTION_IDS})
    built[COPIER] = _copied_solution(source)
    return built


graded = h.graded_fixture(ASSIGNMENT, build_submissions)



# Validate: a bug in each part as a student's saved notebook, with the messages Validate
# must show. Neither is endless (one time limit in the whole module is enough), and each
# fails a visible check on every machine of the variants (an off-by-one m lands on a tie).
VALIDATE = {
    "off_by_one_and_no_network": (
        [("derive_solution", OFF_BY_ONE), ("simulate_solution", WITHOUT_THE_NETWORK)],
        ["the ring is not strictly faster",
         "two_level_switch_point(2, 2, 512) raised TypeError"]),
    # the library's answer passes the visible checks: Validate must say it is refused
    "library": ([("derive_solution", DERIVE_WITH_THE_LIBRARY),
                 ("simulate_solution", SIMULATE_WITH_THE_LIBRARY)],
                ["switch_point uses the library's `predict`",
                 "two_level_switch_point uses the library's `"]),
    # both parts answered with `return None`: Validate said "Success!" (then 0 of 8)
    "returns_none": ([("derive_solution", "return None"), ("simulate_solution", "return None")],
                     ["returned None, but at m = 4096 the simulated ring takes",
                      "two_level_switch_point(2, 2, 512) returned None, but at m = m_max = 512 "
                      "the simulated ring takes"]),
    # twelfth round (B-F6): M_MAX set again above part (ii): Validate said "Success!"
    "m_max_changed": ([h.code_above("simulate_solution", "M_MAX = 4096\n")],
                      ["your cells changed M_MAX: they set it to 4096, the set-up cell "
                       "gives"]),
}

validated = validated_fixture(ASSIGNMENT, lambda source: h.submissions(
    source, {student: changes for student, (changes, _) in VALIDATE.items()}), [*VALIDATE],
    written={"why_answer": "On two nodes the uplinks are shared ..."})


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "math.floor(x) + 1", "slope = (log_p", "_reference", "_CASES",
        "for m in range(p, m_max + 1)", "moves **down**"],
        shows=["def switch_point(p, ts, tw):",
               "def two_level_switch_point(nodes, per_node, m_max=M_MAX):",
               'VARIANT = variant("allreduce_switch_point")'], unanswered=2)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT, set(CELLS), 10, by_hand={"why_answer": 2})


def test_the_solution_gets_full_marks_on_every_machine(graded):
    _, results = graded
    assert len({_machine(s) for s in ("solution", *SOLUTION_IDS)}) == 1 + len(SOLUTION_IDS)
    for student in SOLUTION_IDS:
        h.assert_full_marks(results[student])


@pytest.mark.parametrize("student, scores, messages", [
    ("off_by_one", {"derive_tests": 0, "simulate_tests": 0},
     {"derive_tests": "the ring is not strictly faster",
      "simulate_tests": "two_level_switch_point(1, 2, 64) did not return within 3 s of real "
                        "time"}),
    ("no_ceiling", {"derive_tests": 0, "simulate_tests": 0},
     {"derive_tests": "the ring is not strictly faster",
      "simulate_tests": "two_level_switch_point(2, 2, 512) raised TypeError: model must be a "
                        "CostModel, a LogGPModel, or a TwoLevelModel on a TwoLevel network"}),
    ("at_least", {"derive_tests": 0, "simulate_tests": 0},
     {"derive_tests": "the ring is not strictly faster",
      "simulate_tests": "already strictly faster"}),
    # ln 4 < 1.5: no switch point for p = 4, which the visible check of a None refuses
    ("natural_log", {"derive_tests": 0, "simulate_tests": 0},
     {"derive_tests": "returned None, but at m = 4096 the simulated ring takes",
      "simulate_tests": "two_level_switch_point uses the library's `selection`; search by "
                        "simulating the two catalog entries yourself"}),
    ("library", {"derive_tests": 0, "simulate_tests": 4},
     {"derive_tests": "switch_point uses the library's `predict`; derive the switch point "
                      "from the two closed forms, written yourself"}),
    # beyond 4096 words the closed forms stand in for the simulation
    ("huge_m", {"derive_tests": 0, "simulate_tests": 4},
     {"derive_tests": "returned 100000000, but "}),
    # on every student's machine the ring wins on 2 nodes of 16 PEs at some m below p
    ("from_one", {"derive_tests": 4, "simulate_tests": 0},
     {"simulate_tests": "it must return a whole m from p = "}),
    # a bound m_max at the switch point itself
    ("without_m_max", {"derive_tests": 4, "simulate_tests": 0},
     {"simulate_tests": "returned None, but on this machine the simulated ring is strictly "
                        "faster at some m from p = 8 to m_max = "}),
    # on every student's machine the ring wins at m = p on 2 nodes of 32 PEs
    ("from_p_plus_one", {"derive_tests": 4, "simulate_tests": 0},
     {"simulate_tests": "two_level_switch_point(2, 32, 512) returned"}),
])
def test_each_bug_costs_its_cell_with_a_helpful_message(graded, student, scores, messages):
    _, results = graded
    result = results[student]
    assert {cell: result.scores[cell] for cell in CELLS} == scores, result.messages()
    for cell, message in messages.items():
        assert message in flat(result.messages(cell)), result.messages(cell)


@pytest.mark.parametrize("student, cell, kind", [
    ("off_by_one", "derive_tests", "wrong_result"),
    ("off_by_one", "simulate_tests", "time_limit"),
    ("no_ceiling", "simulate_tests", "exception"),
    ("natural_log", "simulate_tests", "uses_library"),
    ("library", "derive_tests", "uses_library"),
])
def test_a_failed_check_records_its_kind(graded, student, cell, kind):
    # the class report (python -m collective_lib.autograde.misconceptions) counts by cause
    _, results = graded
    assert results[student].cell(cell).metadata["collective_lib"] == {"failure": kind}


def test_a_tie_is_named_as_one(graded):
    _, results = graded
    assert "(a tie: the ring must be strictly faster)" in flat(
        results["at_least"].messages("derive_tests"))


def test_an_answer_copied_from_another_machine_fails_part_ii(graded):
    # part (i) is general (it takes ts and tw) and passes, as any general answer should;
    # part (ii) written for another student's machine fails on the copier's own
    _, results = graded
    result = results[COPIER]
    assert {cell: result.scores[cell] for cell in CELLS} == {
        "derive_tests": 4, "simulate_tests": 0}, result.messages()
    text = flat(result.messages("simulate_tests"))
    found = re.search(r"two_level_switch_point\((\d+), (\d+), (\d+)\) returned (\w+)", text)
    nodes, per_node, m_max = map(int, found.groups()[:3])
    want = _two_level_reference(nodes, per_node, m_max, _machine(COPIER))
    assert want is not None and str(want) != found.group(4)
    assert not re.search(rf"\b{want}\b", text[found.end():]), (want, text)


def test_no_message_gives_an_answer_away(graded):
    # a failing call's message never states the m it should have returned
    course, results = graded
    text = h.released_text(course, ASSIGNMENT)
    assert "885" not in text.replace("switch_point(8, 100, 1)", "")
    for student in ("off_by_one", "no_ceiling", "at_least", "natural_log"):
        message = flat(results[student].messages("derive_tests"))
        found = re.search(r"switch_point\((\d+), ([\d.e+-]+), ([\d.e+-]+)\) returned "
                          r"(\d+|None)", message)
        p, ts, tw = int(found.group(1)), float(found.group(2)), float(found.group(3))
        got = None if found.group(4) == "None" else int(found.group(4))
        model = CostModel(ts=ts, tw=tw)
        want = next(m for m in range(1, 10 * (got or 4096) + 10)
                    if RING.predict(p, m, model) < DOUBLING.predict(p, m, model))
        assert want != got and not re.search(rf"\b{want}\b", message[found.end():]), (
            student, want, message)


def test_the_visible_checks_say_what_they_do_not_check(graded):
    course, _ = graded
    text = flat(h.released_text(course, ASSIGNMENT)).replace('\\n" "', " ")
    assert ("Not checked here (the graded tests check them): that None is right for every m "
            "(only m = 4096 is tried here), that no smaller m wins" in text)
    assert ("Not checked here (the graded tests check them): that None is right for every m "
            "up to m_max (only m_max is tried here), that no smaller m wins" in text)


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: v[1] for student, v in VALIDATE.items()})



def test_on_every_machine_a_search_from_one_fails_on_two_nodes_of_16():
    """The graded tests try 2 nodes of 16 PEs because there, on every student's machine, the
    simulated ring is strictly faster at some m below p = 32 (some blocks empty): a search
    from m = 1 returns that m instead of the switch point from p on."""
    import itertools
    from collective_lib.autograde.variants import DECLARED

    declared = DECLARED[ASSIGNMENT]
    network = TwoLevel(2, 16)
    for ts_in, tw_in, ts_out, tw_out in itertools.product(*(
            declared[name] for name in ("ts_inside", "tw_inside", "ts_between", "tw_between"))):
        model = TwoLevelModel(inside=CostModel(ts=ts_in, tw=tw_in),
                              between=CostModel(ts=ts_out, tw=tw_out))
        assert any(RING.simulate(32, m, model=model, network=network, trace=False).time
                   < DOUBLING.simulate(32, m, model=model, network=network, trace=False).time
                   for m in range(1, 32)), model
        assert _two_level_reference(2, 16, 512, model) is not None, model


def test_on_every_machine_a_search_from_p_plus_one_fails_on_two_nodes_of_32():
    """The graded tests try 2 nodes of 32 PEs, up to M_MAX and up to m_max = p, because there,
    on every student's machine, the simulated ring is strictly faster at m = p = 64 itself:
    a search from p + 1 misses it (it passed every other case on 12 of the 36 machines)."""
    from collective_lib.autograde.variants import DECLARED

    network = TwoLevel(2, 32)
    for model in _every_machine(DECLARED[ASSIGNMENT]):
        assert (RING.simulate(64, 64, model=model, network=network, trace=False).time
                < DOUBLING.simulate(64, 64, model=model, network=network, trace=False).time
                ), model
    assert variant(ASSIGNMENT, "from_p_plus_one").ts_between in (12, 16)
    assert variant(ASSIGNMENT, "from_p_plus_one").tw_between == 1


def test_on_every_machine_the_visible_checks_refuse_a_none():
    """Validate checks a None where the ring wins on every student's machine: on one level
    with p = 4 and 8 at m = 4096 (part (i), with the costs of either level), and on 2 nodes
    of 2 PEs at m_max = 512 (part (ii))."""
    from collective_lib import FullyConnected
    from collective_lib.autograde.variants import DECLARED

    def faster(p, m, model, network):
        return (RING.simulate(p, m, model=model, network=network, trace=False).time
                < DOUBLING.simulate(p, m, model=model, network=network, trace=False).time)

    for model in _every_machine(DECLARED[ASSIGNMENT]):
        for level in (model.inside, model.between):
            for p in (4, 8):
                assert faster(p, 4096, level, FullyConnected(p)), (p, level)
            assert not faster(2, 4096, level, FullyConnected(2)), level    # None is right
        assert faster(4, 512, model, TwoLevel(2, 2)), model
        assert not faster(2, 64, model, TwoLevel(1, 2)), model               # None is right


def _every_machine(declared):
    """The machines of every variant: each choice of the four costs."""
    import itertools

    for ts_in, tw_in, ts_out, tw_out in itertools.product(*(
            declared[name] for name in ("ts_inside", "tw_inside", "ts_between", "tw_between"))):
        yield TwoLevelModel(inside=CostModel(ts=ts_in, tw=tw_in),
                            between=CostModel(ts=ts_out, tw=tw_out))


def test_a_searched_switch_point_keeps_its_points_and_is_flagged_for_the_grader(graded):
    # the task asks for a derivation; a search may be right everywhere, so a human reads it
    course, results = graded
    h.assert_full_marks(results["bisects"])
    from nbgrader.api import Gradebook          # slow to import: only here
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        flagged = gb.find_grade("derive_tests", ASSIGNMENT, ASSIGNMENT, "bisects")
        comment = gb.find_comment("derive_solution", ASSIGNMENT, ASSIGNMENT,
                                  "bisects").auto_comment
        honest = gb.find_grade("derive_tests", ASSIGNMENT, ASSIGNMENT, "solution")
        other_part = gb.find_grade("simulate_tests", ASSIGNMENT, ASSIGNMENT, "bisects")
    assert flagged.needs_manual_grade and not honest.needs_manual_grade
    assert not other_part.needs_manual_grade           # part (ii) asks for a search
    assert ("Flagged for review: switch_point: its definition uses a while loop; part (i) "
            "asks for the switch point derived from the closed forms, not searched"
            in comment), comment


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
