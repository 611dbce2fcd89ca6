"""SPMD programs of tests/mpi/test_mpi.py that are not in the catalog (run under mpiexec)."""
from collective_lib import recv, send, sendrecv


def receive_first_ring(me, p, data):
    """Every PE waits for its right neighbour before sending left: nobody ever sends."""
    got = yield recv((me + 1) % p)
    yield send((me - 1) % p, data)
    return got


def pair_waits_for_each_other(me, p, data):
    """PEs 0 and 1 both receive first (a deadlock); the other PEs return at once."""
    if me < 2:
        got = yield recv(1 - me)
        yield send(1 - me, data)
        return got
    return data


def send_and_forget(me, p, data):
    """PE 0 sends to PE 1, which returns without receiving."""
    if me == 0:
        yield send(1, data)
    return data


def my_ring_allgather(me, p, data):
    """A student's all-gather on a ring: pass along what came from the left, p - 1 times."""
    result = [None] * p
    result[me] = msg = data
    for step in range(1, p):
        msg = yield sendrecv((me + 1) % p, msg, (me - 1) % p)
        result[(me - step) % p] = msg
    return result


def my_wrong_allgather(me, p, data):
    """Like my_ring_allgather, but stores each message at the wrong place."""
    result = [None] * p
    result[me] = msg = data
    for step in range(1, p):
        msg = yield sendrecv((me + 1) % p, msg, (me - 1) % p)
        result[(me + step) % p] = msg
    return result


def spin_without_yielding(me, p, data):
    """Never yields nor returns: only the launcher's timeout can stop it."""
    while True:
        pass
    yield  # noqa: unreachable; makes this a generator function


def nan_sized_send(me, p, data):
    """PE 0 yields a Send record built by hand with the size NaN (not through send())."""
    from collective_lib.ops import Send
    if me == 0:
        yield Send(1, data, float("nan"))
    elif me == 1:
        yield recv(0)
    return data


def yields_a_string(me, p, data):
    """PE 0 yields something that is not an operation at all."""
    if me == 0:
        yield "send to 1"
    return data
