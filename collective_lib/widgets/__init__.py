"""Interactive demos for the chapters (ipywidgets): players and a cost explorer.

* :mod:`~collective_lib.widgets.players` -- :func:`step_player`, :func:`value_player`;
* :mod:`~collective_lib.widgets.costs` -- :func:`cost_explorer`;
* :mod:`~collective_lib.widgets.choice` -- :func:`choice_explorer` (which algorithm wins
  where, beside MPICH's switch points);
* :mod:`~collective_lib.widgets.locks` -- :func:`lock_player`.

The catalog players and the cost explorer are driven by
:func:`collective_lib.catalog`: every algorithm registered for the chosen
operation appears in them.  Each function returns a small object that
Jupyter displays as the live widget; it also carries a static ``text/html``
version (an animation of the steps, or a picture of the curves) for a page
built without a kernel, such as the HTML book.

Figures are drawn on :class:`matplotlib.figure.Figure` objects made here and
sent to an :class:`ipywidgets.Image` as PNG, so this package never touches
pyplot or the notebook's matplotlib backend.
"""
from . import choice, costs, locks, players
from .choice import CHOICE_PS, ChoiceExplorer, choice_explorer
from .costs import (MAX_SIMULATED_P, MAX_SIMULATED_PACKETS, MAX_SIMULATED_WORDS,
                    SIMULATION_BUDGET, CostExplorer, cost_explorer)
from .locks import LOCK_PLAYER_FRAMES, LOCK_PLAYER_MAX_P, LockPlayer, lock_player
from .players import MAX_P, MAX_VALUE_P, StepPlayer, ValuePlayer, step_player, value_player

__all__ = [*players.__all__, *costs.__all__, *choice.__all__, *locks.__all__]
