"""Pictures of networks, runs, costs and shared memory (matplotlib).

One module per kind of picture; every public name is re-exported here, so
``from collective_lib import viz; viz.draw_step(...)`` works:

* :mod:`~collective_lib.viz.topology` -- :func:`draw_network`, :func:`draw_step`,
  :func:`draw_steps`, :func:`link_load_map`;
* :mod:`~collective_lib.viz.timelines` -- :func:`space_time`, :func:`space_time_stack`;
* :mod:`~collective_lib.viz.costs` -- :func:`cost_curves`, :func:`cost_per_word`,
  :func:`winner_maps`, :func:`mark_value`, :func:`optimal_params`,
  :func:`simulated_time`, :func:`forget_simulated_times`;
* :mod:`~collective_lib.viz.choice` -- :func:`choice_map` (which algorithm the closed forms
  and the simulator pick over p and m, beside MPICH's switch points), :func:`mpich_boundaries`;
* :mod:`~collective_lib.viz.tables` -- :func:`holdings_table`, :func:`values_table`;
* :mod:`~collective_lib.viz.memory` -- :func:`memory_timeline`, :func:`wait_graph`
  and the data they draw (:func:`memory_spans`, :func:`critical_sections`, ...);
* :mod:`~collective_lib.viz.measurements` -- :func:`measured_vs_model`, :func:`jobs_vs_model`,
  :func:`ping_pong_fit` (real timings
  beside the model's, oversubscribed jobs marked);
* :mod:`~collective_lib.viz.graphs` -- :func:`draw_bipartite_multigraph`,
  :func:`draw_multigraph_steps`;
* :mod:`~collective_lib.viz.trees` -- :func:`draw_in_order_tree`, :func:`draw_in_order_run`,
  :func:`draw_binomial_run`,
  :func:`draw_heap_tree`, :func:`draw_mesh_tree`;
* :mod:`~collective_lib.viz.cubes` -- :func:`draw_cube`, :func:`draw_cube_path`;
* :mod:`~collective_lib.viz.two_level` -- :func:`draw_two_level` (nodes of PEs, the switch,
  the load on each node's external links);
* :mod:`~collective_lib.viz.style` -- the colours, sizes and fonts they all share, and
  :func:`smallest_font`, the smallest text of a figure as the book shows it, and
  :func:`warn_small_text`, the figure hook the chapters set to hold their own figures to it,
  and :func:`book_figures`, a chapter's set-up of its figures;
* :mod:`~collective_lib.viz.descriptions` -- :func:`describe`, :func:`description`: what a
  drawing shows, in words (its alt text in the book); :func:`curve_comparison`.

Every drawing function says in words what it drew (:func:`description` of its figure).

Every drawing function takes an optional ``ax``; without one it opens a new
figure through pyplot (so that a notebook shows it) and returns the Axes.
Nothing is shown or printed.  Recording what each PE holds during a run is not
a picture: it lives in :mod:`collective_lib.recording`, and the symbolic
operands "x:y" in :mod:`collective_lib.spans`.
"""
from . import (choice, costs, cubes, descriptions, graphs, measurements, memory, style, tables, timelines,
               topology, trees, two_level)
from .costs import (cost_curves, cost_per_word, forget_simulated_times, mark_value,
                    optimal_params, simulated_time, winner_maps)
from .choice import choice_map, mpich_boundaries
from .cubes import CUBE_POSITIONS, draw_cube, draw_cube_path
from .descriptions import curve_comparison, describe, description, forget_description
from .graphs import draw_bipartite_multigraph, draw_multigraph_steps
from .measurements import Timings, jobs_vs_model, measured_vs_model, oversubscribed, ping_pong_fit
from .memory import (MemorySpan, Wait, cache_holders, critical_sections, memory_spans,
                     memory_timeline, wait_graph, waits_on)
from .style import (ARROW_COLOUR, BOOK_DPI, FONT, HATCHES, HOLDER_COLOUR, LINE_STYLES, LINK_COLOUR,
                    MARKERS, MAX_DRAWN_CLIQUE, MAX_LABELLED, MIN_FONT, MIN_FONT_PX, NODE_COLOUR,
                    OVERSUBSCRIBED_COLOUR, PALETTE, READABLE_SHARE, SECTION_COLOURS, TEXT_COLUMN_PX, TEXT_WIDTH,
                    TITLE_FONT, TREE_EDGE_COLOUR, SmallestFont, category_style, smallest_font,
                    book_figures, warn_small_text)
from .tables import Holding, ValuesTable, holdings_table, values_table
from .timelines import space_time, space_time_stack
from .topology import (draw_network, draw_step, draw_steps, link_load_map, payload_sources,
                       sources_label)
from .trees import (draw_binomial_run, draw_heap_tree, draw_in_order_run, draw_in_order_tree,
                    draw_mesh_tree)
from .two_level import draw_two_level

__all__ = [*descriptions.__all__, *topology.__all__, *timelines.__all__, *costs.__all__, *choice.__all__, *tables.__all__,
           *memory.__all__, *measurements.__all__, *graphs.__all__, *trees.__all__, *cubes.__all__, *style.__all__,
           *two_level.__all__]
