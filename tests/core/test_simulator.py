"""The simulator's rules: timing, ports, matching, routing, errors, determinism."""
import numpy as np
import pytest

from collective_lib import (CostModel, DeadlockError, Hypercube, LinearArray,
                            Mesh, OperationLimitError, Ring, UnreceivedMessageError, compute,
                            exchange, multi, recv, send, sendrecv, simulate)
from collective_lib.ops import Compute, Multi, Recv, Send, SendRecv, shown


def ping(me, p, data):
    if me == 0:
        yield send(1, data)
    elif me == 1:
        return (yield recv(0))


def swap(me, p, data):
    return (yield exchange(1 - me, data))


def test_one_transfer_costs_ts_plus_tw_m():
    run = simulate(ping, 2, [list(range(10)), None], model=CostModel(ts=3, tw=0.5))
    assert run.results == [None, list(range(10))]
    assert run.time == 3 + 0.5 * 10
    (m,) = run.messages
    assert (m.src, m.dst, m.start, m.end, m.words, m.path) == (0, 1, 0, 8.0, 10, ((0, 1),))


def test_explicit_words_override_the_payload_size():
    def prog(me, p, data):
        if me == 0:
            yield send(1, "x", words=100)
        else:
            yield recv(0)
    assert simulate(prog, 2, model=CostModel(ts=1, tw=1)).time == 101


def test_default_model_counts_steps():
    assert simulate(ping, 2, [list(range(1000)), None]).time == 1.0


def test_messages_between_a_pair_match_in_fifo_order():
    def prog(me, p, data):
        if me == 0:
            for x in "abc":
                yield send(1, x)
        else:
            got = []
            for _ in range(3):
                got.append((yield recv(0)))
            return got
    assert simulate(prog, 2).results[1] == ["a", "b", "c"]


def test_receives_from_different_sources_match_by_source():
    def prog(me, p, data):
        if me == 2:
            first = yield recv(1)
            second = yield recv(0)
            return first, second
        yield send(2, me)
    assert simulate(prog, 3).results[2] == (1, 0)


@pytest.mark.parametrize("ports, steps", [("full-duplex", 1), ("all", 1), ("half-duplex", 2)])
def test_exchange_takes_one_step_with_two_ports_and_two_with_one(ports, steps):
    run = simulate(swap, 2, ["a", "b"], model=CostModel(ts=1, tw=0, ports=ports))
    assert run.results == ["b", "a"]
    assert run.time == steps


def test_half_duplex_pes_that_both_send_first_deadlock():
    def talk_first(me, p, data):
        yield send(1 - me, data)
        return (yield recv(1 - me))
    assert simulate(talk_first, 2, [1, 2]).results == [2, 1]      # eager, full duplex
    with pytest.raises(DeadlockError) as err:
        simulate(talk_first, 2, [1, 2], model=CostModel(ports="half-duplex"))
    assert err.value.blocked == {0: "send(dst=1): PE 1 never posted the matching receive",
                                 1: "send(dst=0): PE 0 never posted the matching receive"}


def test_a_sender_port_serializes_its_sends_and_a_receiver_port_its_receives():
    def fan_out(me, p, data):
        if me == 0:
            for dst in range(1, p):
                yield send(dst, data)
        else:
            yield recv(0)
    run = simulate(fan_out, 5, model=CostModel(ts=2, tw=0))
    assert run.time == 8
    assert sorted(run.finish_times) == [2, 4, 6, 8, 8]

    def fan_in(me, p, data):
        if me == 0:
            for src in range(1, p):
                yield recv(src)
        else:
            yield send(0, me)
    assert simulate(fan_in, 5).time == 4


def test_all_ports_let_a_pe_use_every_link_at_once():
    def star(me, p, data):
        if me == 0:
            yield multi(sends=[(d, "x") for d in range(1, p)])
        else:
            return (yield multi(recvs=[0]))
    assert simulate(star, 4, model=CostModel(ports="all")).time == 1
    assert simulate(star, 4, model=CostModel(ports="full-duplex")).time == 3
    assert simulate(star, 4, model=CostModel(ports="all")).results[1:] == [["x"]] * 3


def test_multi_returns_payloads_in_the_order_of_its_receives():
    def prog(me, p, data):
        if me == 0:
            return (yield multi(recvs=[2, 1]))
        yield send(0, me * 10)
    assert simulate(prog, 3, model=CostModel(ports="all")).results[0] == [20, 10]


def test_compute_advances_only_its_own_pe():
    def prog(me, p, data):
        if me == 0:
            yield compute(5)
            yield send(1, "late")
        else:
            return (yield recv(0))
    run = simulate(prog, 2)
    assert run.time == 6 and run.results[1] == "late"


def test_four_transfers_over_one_link_take_four_times_as_long():
    # Grama Fig. 4.12's effect on a linear array: PEs 0..3 send to PE i + 4,
    # and every route crosses the directed link 3 -> 4.
    def shift(me, p, data):
        if me < 4:
            yield send(me + 4, data)
        else:
            return (yield recv(me - 4))
    model = CostModel(ts=2, tw=0.25)
    run = simulate(shift, 8, [[0] * 4] * 8, network=LinearArray(8), model=model)
    neighbour = model.transfer_time(4, hops=1)
    assert run.time == 4 * neighbour
    assert run.link_load[(3, 4)] == 4 and run.max_link_load() == 4
    fully = simulate(shift, 8, [[0] * 4] * 8, model=model)
    assert fully.time == neighbour


@pytest.mark.parametrize("routing, expected", [("cut-through", 10 + 3 * 2 + 5 * 1),
                                               ("store-and-forward", 10 + (5 * 1 + 2) * 3)])
def test_routing_formulas_over_three_hops(routing, expected):
    model = CostModel(ts=10, tw=1, th=2, routing=routing)
    def prog(me, p, data):
        if me == 0:
            yield send(3, data)
        elif me == 3:
            yield recv(0)
    run = simulate(prog, 4, [[1] * 5, None, None, None], network=LinearArray(4), model=model)
    assert run.time == expected == model.transfer_time(5, 3)
    assert run.messages[0].path == ((0, 1), (1, 2), (2, 3))


def test_ring_mesh_and_hypercube_routes():
    assert Ring(8).path(6, 1) == ((6, 7), (7, 0), (0, 1))
    assert Ring(8).path(1, 6) == ((1, 0), (0, 7), (7, 6))
    assert Ring(8).path(0, 4) == ((0, 1), (1, 2), (2, 3), (3, 4))       # tie: increasing way
    assert Mesh(3, 3).path(0, 8) == ((0, 1), (1, 2), (2, 5), (5, 8))     # X first, then Y
    assert Mesh(3, 4, wrap=True).path(0, 3) == ((0, 3),)
    assert Mesh(3, 4, wrap=True).path(0, 8) == ((0, 8),)              # row 0 -> row 2 wraps
    assert Hypercube(3).path(5, 2) == ((5, 4), (4, 6), (6, 2))          # low bit first
    assert Hypercube.of_size(16).d == 4
    for net in (Ring(7), LinearArray(5), Mesh(3, 4), Mesh(4, 4, wrap=True), Hypercube(4)):
        links = set(net.links())
        for s in range(net.p):
            for d in range(net.p):
                path = net.path(s, d)
                assert all(link in links for link in path)
                assert (path[0][0] if path else s) == s and (path[-1][1] if path else d) == d


def test_mesh_wrap_takes_the_shorter_way_in_each_dimension():
    mesh = Mesh(5, 5, wrap=True)
    assert mesh.hops(0, 4) == 1 and mesh.hops(0, 24) == 2
    assert Mesh(5, 5).hops(0, 24) == 8


def test_deadlock_names_every_blocked_pe_and_its_operation():
    def cycle(me, p, data):
        yield recv((me + 1) % p)
    with pytest.raises(DeadlockError) as err:
        simulate(cycle, 3)
    assert err.value.blocked == {0: "recv(src=1)", 1: "recv(src=2)", 2: "recv(src=0)"}
    assert "PE 2: recv(src=0)" in str(err.value)


def test_waiting_on_a_pe_that_returned_is_a_deadlock():
    def prog(me, p, data):
        if me == 1:
            yield sendrecv(0, "x", 0)
    with pytest.raises(DeadlockError, match=r"PE 1: sendrecv\(dst=0, src=0\)"):
        simulate(prog, 2)


def test_unreceived_messages_are_reported():
    def prog(me, p, data):
        if me == 0:
            yield send(1, 1)
            yield send(1, 2)
        return None
    with pytest.raises(UnreceivedMessageError) as err:
        simulate(prog, 2)
    assert err.value.unreceived == {(0, 1): 2}


def test_an_endless_program_hits_the_operation_limit():
    def endless(me, p, data):
        while True:
            yield compute(1)
    with pytest.raises(OperationLimitError, match="max_ops=100"):
        simulate(endless, 2, max_ops=100)


def test_an_error_in_a_program_names_the_pe():
    def prog(me, p, data):
        if me == 2:
            raise KeyError("oops")
        yield from ()
    with pytest.raises(KeyError) as err:
        simulate(prog, 3)
    assert "raised by PE 2 of 3" in "".join(err.value.__notes__)


@pytest.mark.parametrize("call, message", [
    (lambda: simulate(ping, 0), "p must be an integer >= 1, got 0"),
    (lambda: simulate(ping, 2, [1]), "inputs has 1 entries but p=2"),
    (lambda: simulate(ping, 3, network=Ring(4)), "network has 4 PEs but p=3"),
    (lambda: Hypercube.of_size(6), "power of two, got p=6"),
    (lambda: CostModel(ts=-1), "ts must be a non-negative number, got -1"),
    (lambda: CostModel(ports="duplex"), "unknown ports 'duplex'"),
    (lambda: CostModel(routing="wormhole"), "unknown routing 'wormhole'"),
    (lambda: compute(-2), "time=-2: a time must be a finite non-negative number"),
    (lambda: send(1, "x", words=-3), "words=-3: a message size must be a non-negative integer"),
    (lambda: Mesh(0, 3), "rows must be an integer >= 1, got 0"),
    (lambda: simulate(ping, 2, max_ops=0), "max_ops must be an integer >= 1, got 0"),
])
def test_bad_arguments_raise_value_errors_naming_the_value(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


@pytest.mark.parametrize("op, message", [
    (lambda me: send(5, 0), "PE 0 names destination 5, which is not a rank in 0..1"),
    (lambda me: recv(-1), "PE 0 names source -1"),
    (lambda me: send(me, 0), "PE 0 names itself as destination"),
    (lambda me: sendrecv(1, 0, 7), "PE 0 names source 7"),
])
def test_bad_ranks_in_operations(op, message):
    def prog(me, p, data):
        if me == 0:
            yield op(me)
    with pytest.raises(ValueError, match=message):
        simulate(prog, 2)


# Records a program builds itself (the named tuples of collective_lib.ops, without
# send(), compute(), ...): the simulator checks every size, time and rank, on each path
# of its loop (sendrecv's own, the general one of half-duplex ports, links of a ring).
NAN, INF = float("nan"), float("inf")
WORDS_RULE = "a message size must be a non-negative integer"
TIME_RULE = "a time must be a finite non-negative number"
RAW_RECORDS = [
    (Send(1, [1], NAN), f"Send with words=nan: {WORDS_RULE}"),
    (Send(1, [1], -3), f"Send with words=-3: {WORDS_RULE}"),
    (Send(1, [1], INF), f"Send with words=inf: {WORDS_RULE}"),
    (Send(1, [1], 2.0), f"Send with words=2.0: {WORDS_RULE}"),
    (Send(1, [1], True), f"Send with words=True: {WORDS_RULE}"),
    (SendRecv(1, [1], 1, NAN), f"SendRecv with words=nan: {WORDS_RULE}"),
    (SendRecv(1, [1], 1, -1), f"SendRecv with words=-1: {WORDS_RULE}"),
    (SendRecv(1, [1], 1, False), f"SendRecv with words=False: {WORDS_RULE}"),
    (Send(1, [1], 10 ** 400),
     f"Send with words={shown(10 ** 400)}: a message size must be below 2**53 words"),
    (SendRecv(1, [1], 1, 2 ** 53),
     f"SendRecv with words={2 ** 53}: a message size must be below 2**53 words"),
    (Multi(((1, [1], 2 ** 60),), ()),
     f"Multi with words={2 ** 60}: a message size must be below 2**53 words"),
    (Compute(NAN), f"Compute with time=nan: {TIME_RULE}"),
    (Compute(-1.0), f"Compute with time=-1.0: {TIME_RULE}"),
    (Compute(INF), f"Compute with time=inf: {TIME_RULE}"),
    (Compute(True), f"Compute with time=True: {TIME_RULE}"),
    (Compute(10 ** 400), f"Compute with time={shown(10 ** 400)}: {TIME_RULE}"),
    (Multi(((1, [1], NAN),), (1,)), f"Multi with words=nan: {WORDS_RULE}"),
    (Multi(((1, [1], -2),), ()), f"Multi with words=-2: {WORDS_RULE}"),
    (Multi(((1, [1]),), ()),
     "Multi with sends[0]=(1, [1]): a send of a multi() is a (dst, data, words) triple"),
    (Multi(7, ()), "Multi with sends=7: a multi()'s sends are a tuple"),
    (Multi((), 7), "Multi with recvs=7: a multi()'s recvs are a tuple"),
]
# Ranks: the simulator's own message, as for the records send() makes.
RAW_RANKS = [
    (Send(5, [1], 1), "PE 0 names destination 5, which is not a rank in 0..1"),
    (Recv(-1), "PE 0 names source -1, which is not a rank in 0..1"),
    (SendRecv(1.0, [1], 1, 1), "PE 0 names destination 1.0, which is not a rank in 0..1"),
    (Multi(((True, [1], 1),), ()), "PE 0 names destination True, which is not a rank in 0..1"),
    (Multi((), (0,)), "PE 0 names itself as source; a PE cannot message itself"),
]
MODELS = {"full-duplex": dict(model=CostModel(ts=1, tw=1)),
          "half-duplex": dict(model=CostModel(ts=1, tw=1, ports="half-duplex")),
          "all ports, ring": dict(model=CostModel(ts=1, tw=1, ports="all"), network=Ring(2))}


@pytest.mark.parametrize("op, message", [(op, f"PE 0 yielded {message}")
                                         for op, message in RAW_RECORDS] + RAW_RANKS)
@pytest.mark.parametrize("setting", MODELS)
def test_a_record_built_without_the_constructors_is_checked_all_the_same(op, message, setting):
    def prog(me, p, data):
        if me == 0:
            yield op
        else:
            yield from ()
    with pytest.raises(ValueError) as err:
        simulate(prog, 2, **MODELS[setting])
    assert str(err.value) == message


def test_nan_or_negative_sizes_cannot_make_a_slow_program_fast():
    """The attack of issue 23: a direct scatter whose messages claim no real size."""
    def direct_scatter(me, p, data, words=None):
        if me != 0:
            return (yield recv(0))
        for dst in range(1, p):
            yield Send(dst, data[dst], len(data[dst]) if words is None else words)
        return data[0]
    inputs = [[[i] * 3 for i in range(8)]] + [None] * 7
    model = CostModel(ts=1, tw=0.5)
    assert simulate(direct_scatter, 8, inputs, model=model).time == 7 * (1 + 0.5 * 3)
    for words in (NAN, -3, -1000):
        with pytest.raises(ValueError, match=f"^PE 0 yielded Send with words={words}: "):
            simulate(direct_scatter, 8, inputs, model=model, words=words)

    def padded(me, p, data):
        yield Compute(-1.0)
        return (yield from direct_scatter(me, p, data))
    with pytest.raises(ValueError, match=r"^PE \d yielded Compute with time=-1.0: "):
        simulate(padded, 8, inputs, model=model)


def test_numpy_integers_are_sizes_and_a_record_built_by_hand_costs_what_send_costs():
    def prog(me, p, data, make):
        if me == 0:
            yield make(data)
            yield Compute(np.float64(0.5))
        else:
            return (yield recv(0))
    model = CostModel(ts=1, tw=0.5)
    by_hand = simulate(prog, 2, [[1, 2, 3, 4], None], model=model,
                       make=lambda data: Send(1, data, np.int64(4)))
    honest = simulate(prog, 2, [[1, 2, 3, 4], None], model=model,
                      make=lambda data: send(1, data))
    assert by_hand.time == honest.time == 3.5 and by_hand.results == honest.results
    assert by_hand.messages[0].words == 4 and type(by_hand.messages[0].words) is int


def test_programs_must_be_generators_and_yield_operations():
    with pytest.raises(TypeError, match="not a generator function"):
        simulate(lambda me, p, data: None, 2)

    def yields_junk(me, p, data):
        yield "hello"
    with pytest.raises(TypeError, match="PE 0 yielded 'hello'"):
        simulate(yields_junk, 1)


def test_inputs_may_be_a_function_of_the_rank_and_params_reach_every_pe():
    def prog(me, p, data, scale=1):
        yield from ()
        return data * scale
    assert simulate(prog, 4, lambda i: i + 1, scale=10).results == [10, 20, 30, 40]


def test_runs_are_deterministic_and_trace_off_changes_nothing_but_the_trace():
    def chatter(me, p, data):
        for r in range(3):
            dst = (me * 3 + r + 1) % p
            if dst != me:
                yield send(dst, (me, r))
        got = []
        for src in range(p):
            for r in range(3):
                if (src * 3 + r + 1) % p == me and src != me:
                    got.append((yield recv(src)))
        return got
    model = CostModel(ts=1, tw=0.1, ports="full-duplex")
    a = simulate(chatter, 7, network=Ring(7), model=model)
    b = simulate(chatter, 7, network=Ring(7), model=model)
    c = simulate(chatter, 7, network=Ring(7), model=model, trace=False)
    assert a.messages == b.messages and a.results == b.results
    assert c.messages == [] and c.results == a.results and c.time == a.time
    assert c.link_load == a.link_load


def test_run_helpers_for_reading_steps():
    def tree(me, p, data):
        if me == 0:
            yield send(2, data)
            yield send(1, data)
        elif me == 2:
            data = yield recv(0)
            yield send(3, data)
        else:
            yield recv(0 if me == 1 else 2)
    run = simulate(tree, 4, ["m", None, None, None])
    assert run.step_starts() == [0.0, 1.0]
    assert [(m.src, m.dst) for m in run.step(1)] == [(0, 2)]
    assert sorted((m.src, m.dst) for m in run.step(2)) == [(0, 1), (2, 3)]
    assert run.informed(by=1.0) == [0, 2]
    assert [m.src for m in run.received(3)] == [2]
    with pytest.raises(ValueError, match="step must be in 1..2, got 3"):
        run.step(3)


@pytest.mark.parametrize("p", [2, 3, 8, 31])
def test_the_fast_path_and_the_general_path_agree(p):
    # A ring all-gather only talks to neighbours, so on a Ring network (general
    # path: links are resources) and on a fully connected one (fast path for
    # sendrecv) every transfer must start and end at the same times.
    def ring_allgather(me, p, data):
        got = [data]
        for _ in range(p - 1):
            got.append((yield sendrecv((me + 1) % p, got[-1], (me - 1) % p)))
        return got
    model = CostModel(ts=1.5, tw=0.25)
    inputs = [[i] * (i + 1) for i in range(p)]
    fast = simulate(ring_allgather, p, inputs, model=model)
    general = simulate(ring_allgather, p, inputs, model=model, network=Ring(p))
    assert fast.results == general.results
    assert [m[:6] for m in fast.messages] == [m[:6] for m in general.messages]
    assert fast.time == general.time


def test_repeated_messages_on_one_channel_match_in_fifo_order_either_way():
    def posted_first(me, p, data):          # the receives wait for the sends
        if me == 0:
            yield compute(1)
            for word in "abc":
                yield send(1, word)
        else:
            return (yield multi(recvs=[0, 0, 0]))

    def sent_first(me, p, data):            # the messages wait in the inbox
        if me == 0:
            yield multi(sends=[(1, word) for word in "abc"])
        else:
            yield compute(5)
            got = []
            for _ in range(3):
                got.append((yield recv(0)))
            return got
    assert simulate(posted_first, 2).results[1] == ["a", "b", "c"]
    assert simulate(sent_first, 2).results[1] == ["a", "b", "c"]


def test_an_endless_program_stops_at_the_default_budget():
    def endless(me, p, data):
        while True:
            yield compute(1)
    with pytest.raises(OperationLimitError,
                       match=r"max_ops=80,256 operations \(the default budget default_max_ops\(8\)"
                             r".*PE \d+ was issuing one.*pass a larger max_ops"):
        simulate(endless, 8)


def test_a_run_too_large_for_the_memory_is_refused_before_it_starts():
    def never_started(me, p, data):
        raise AssertionError("no program may start")
        yield
    with pytest.raises(MemoryError, match=r"p=1,000,000,000,000 PEs needs about .* GiB"):
        simulate(never_started, 10**12)
