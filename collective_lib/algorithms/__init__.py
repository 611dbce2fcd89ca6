"""The algorithms of the book, one module per topic.

Importing a module registers its programs in :func:`collective_lib.catalog`,
and the catalog imports every module of this package by itself
(:func:`collective_lib.catalog.discover`), so nothing lists them.

Adding an algorithm
-------------------
Create ``collective_lib/algorithms/newtopic.py`` (or add to the module of its
topic) with a generator and its closed form, registered against one of the
operations of :mod:`collective_lib.collectives`::

    from ..catalog import register
    from ..ops import recv, send

    __all__ = ["ring_broadcast"]

    CATALOG_POSITION = 15          # optional: after chapter 1's broadcasts (10)


    def ring_broadcast_cost(p, m, model, **_):
        \"\"\"(p - 1)(ts + tw m): the message passes one PE after another.\"\"\"
        return (p - 1) * model.transfer_time(m, hops=1)


    @register(operation="broadcast", cost=ring_broadcast_cost, exact=True,
              tex=r"(p - 1)(t_s + t_w m)", params={"root": 0},
              source="Book, section, figure")
    def ring_broadcast(me, p, data, root=0):
        \"\"\"One line that the summary tables show.\"\"\"
        ...

It then appears in ``catalog()``, in the catalog-driven tests, the widgets and
the chapters' summary tables with no other edit.  ``tex=`` (required) is the
cost's closed form as TeX math without ``$``, the formula of the cost
function's docstring in t_s, t_w, p, m, k, which the summary tables typeset
(see :func:`collective_lib.catalog.register`).  ``register`` also takes the
algorithm's own constraints, so that no caller has to try it and catch the
error: ``valid_p(p)`` and ``valid_m(p, m, **params)`` raise a ValueError
naming the bad value (e.g. a power of two; m >= p; k <= m packets, see
:func:`collective_lib.packets.check_packet_count`), and
``requires_commutative=True`` when the operands are combined out of rank
order.  ``held=`` says what a PE holds after each step in the tables of
values (a local variable's name, a function of the PE's recorded state, or a
dict of those); see :class:`collective_lib.catalog.Algorithm`.

Catalog order
-------------
Entries are listed module by module, in the order of the modules'
``CATALOG_POSITION`` (10 broadcast, 20 reduce, 21 two_tree_prefix, 40 gather,
50 alltoall, 51 personalized, 52 hrelation, 60 cm200, 80 allreduce: chapter order),
then the modules
without one in alphabetical order; within a module in the order they are
registered.  A module that registers nothing (``sync``: locks and barriers on
shared memory) is imported too, harmlessly.
"""

__all__ = []
