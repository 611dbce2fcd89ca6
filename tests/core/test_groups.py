"""Collectives on a subgroup of the PEs (collective_lib.groups)."""
import pytest

from collective_lib import simulate
from collective_lib.algorithms.alltoall import all_to_all_bc_mesh, all_to_all_bc_ring
from collective_lib.groups import in_group


def test_in_group_translates_ranks_and_rejects_outsiders():
    def odd_pes_share(me, p, data):
        if me % 2:
            return (yield from in_group(all_to_all_bc_mesh, [1, 3, 5, 7], me, data))
        yield from ()
    run = simulate(odd_pes_share, 8, list("abcdefgh"))
    assert run.results[1::2] == [["b", "d", "f", "h"]] * 4
    assert all({m.src, m.dst} <= {1, 3, 5, 7} for m in run.messages)

    def outsider(me, p, data):
        return (yield from in_group(all_to_all_bc_ring, [0], me, data))
    with pytest.raises(ValueError, match="PE 1 runs a collective of the group"):
        simulate(outsider, 2, [0, 1])


@pytest.mark.parametrize("bad", [-1, 3, 1.0, True])
def test_a_rank_outside_the_group_is_refused_not_wrapped(bad):
    from collective_lib import recv, send

    def program(me, p, data):
        if me == 0:
            yield send(bad, data)
        else:
            return (yield recv(0))

    def grouped(me, p, data):
        if me in (1, 3, 4):
            return (yield from in_group(program, [1, 3, 4], me, data))
        yield from ()

    with pytest.raises(ValueError, match=rf"a rank in the group={bad!r}: a rank must be an "
                                         r"integer in 0\.\.2"):
        simulate(grouped, 5, list(range(5)))
