"""The CM-200 case study: Mathur and Johnsson's all-to-all communication on a binary d-cube.

The programs themselves are SPMD programs like every other and live in
:mod:`collective_lib.algorithms.cm200`, registered in the catalog.  This
package holds everything around them:

* :mod:`.gray`: binary-reflected Gray codes, transition sequences, ``sh``, Table 1;
* :mod:`.schedules`: the index formulas, the d-cycles schedule, numpy executors
  that check it at the machine's size;
* :mod:`.transfers`: the element transfers in sequence of each program (Table 2),
  counted by the simulator;
* :mod:`.figures`: the paper's step tables (Table 1, Figs. 1, 5-21) regenerated from the library
  and compared with the transcription in ``data/figures.json``;
* :mod:`.models`: the measured tables (``data/tables.json``) and the performance
  models of §6 fitted to them;
* :mod:`.rates`: Table 18's data motion rates and Fig. 22's crossovers, recomputed
  from the measured times;
* :mod:`.matvec`: the application, y = A x on a two-dimensional nodal array, and
  Table 19's CMSSL timings next to a model of them;
* :mod:`.drawings`: the chapter's pictures of cube paths, data layouts and models
  (here, not in :mod:`collective_lib.viz`: they draw this package's fitted models and
  rates, and viz stands below it; they are built from viz's cubes, styles and words).

Import the modules themselves (``from collective_lib.cm200.gray import gray``):
this package imports none of them. :mod:`.gray` and :mod:`.schedules` stand on
a lower floor than the rest (CONTRIBUTING.md, "The layers"): they import
nothing above the cost model, and the programs of
:mod:`collective_lib.algorithms.cm200`, registered in the catalog, stand on them,
while :mod:`.figures`, :mod:`.transfers` and the others run those programs.

Source: K. K. Mathur and S. L. Johnsson, All-to-All Communication on the
Connection Machine CM-200, Harvard TR-02-93 (1993).
"""

__all__: list = []
