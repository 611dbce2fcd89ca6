"""Tables of who holds what after each step of a run.

* :func:`holdings_table` -- which PEs hold the data after each step (one-to-all
  patterns such as a broadcast);
* :func:`values_table` -- the value every PE holds after each step of a
  recorded run (:func:`collective_lib.recording.record_run`), as in Sanders et
  al. 2019, Figs. 13.3, 13.7 and 13.9; with the symbolic operands of
  :mod:`collective_lib.spans` a cell reads ``x:y``, m_x op ... op m_y.
"""
from __future__ import annotations

import html
from typing import NamedTuple

import numpy as np

from ..recording import RecordedRun
from ..spans import rank_ranges
from ._runs import check_traced, holders_at

__all__ = ["holdings_table", "Holding", "values_table", "ValuesTable"]


class Holding(NamedTuple):
    """One row of :func:`holdings_table`."""
    step: int
    start: float
    holders: list


def holdings_table(run, *, pes=None) -> list:
    """Which PEs hold the data at the end of each step (for one-to-all patterns).

    A PE holds the data once it has sent anything (so the root holds it from
    the start) or once a message to it has arrived; the end of a step is when
    its last transfer ends.  For a pipelined broadcast "holds" means "holds at
    least one packet".

    Parameters
    ----------
    run : Run
        A traced run.
    pes : iterable of int, optional
        Report only these PEs (all by default).

    Returns
    -------
    list of Holding
        ``(step, start_time, sorted list of holders)`` per step, a named tuple.

    Examples
    --------
    >>> from collective_lib import catalog
    >>> run = catalog()["binomial_broadcast"].simulate(p=8)
    >>> for row in holdings_table(run):
    ...     print(row.step, row.start, row.holders)
    1 0.0 [0, 4]
    2 1.0 [0, 2, 4, 6]
    3 2.0 [0, 1, 2, 3, 4, 5, 6, 7]
    """
    total = check_traced(run)
    keep = None if pes is None else set(pes)
    rows = []
    for s in range(1, total + 1):
        messages = run.step(s)
        end = max(m.end for m in messages)
        holders = sorted(holders_at(run, end, ()) | {m.src for m in messages})
        if keep is not None:
            holders = [pe for pe in holders if pe in keep]
        rows.append(Holding(s, messages[0].start, holders))
    return rows


# -- which value a PE "holds" ---------------------------------------------------------------

def _received_or_result(state):
    if state.done:
        return state.result
    return state.received if state.received is not None else state.locals.get("data")


def _default_watch(run):
    """What :func:`values_table` shows when not told: what the algorithm declared a PE
    holds, else its last received payload (its input before that) and then its result."""
    return _received_or_result if run.held is None else run.held


def _watch_items(run, watch) -> list:
    """[(label, function of a PEState)] for a watch specification."""
    if watch is None:
        watch = _default_watch(run)
    if isinstance(watch, dict):
        specs = list(watch.items())
    elif isinstance(watch, (list, tuple)):
        specs = [(w if isinstance(w, str) else getattr(w, "__name__", "value"), w)
                 for w in watch]
    else:
        specs = [("", watch)]
    items = []
    for label, spec in specs:
        if isinstance(spec, str):
            items.append((label, _named(spec)))
        elif callable(spec):
            items.append((label, spec))
        else:
            raise ValueError(f"watch must name a local variable or be a function of a "
                             f"PEState, got {spec!r}")
    return items


def _named(name):
    def read(state):
        if name in state.locals:
            return state.locals[name]
        if name in ("result", "received", "heard"):
            return getattr(state, name)
        return None
    read.__name__ = name
    return read


def _format_held(value) -> str:
    """Short text for a held value: '-' for None, one-word messages unwrapped."""
    if value is None:
        return "-"
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (frozenset, set)):
        return rank_ranges(sorted(value))
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return _format_held(value[0])
        return " ".join(_format_held(v) for v in value)
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    return str(value)


class ValuesTable:
    """The values each PE holds after each step; see :func:`values_table`.

    Attributes
    ----------
    pes : list of int
        The PEs shown (columns).
    rows : list of str
        ``"start"``, then ``"step 1"``, ``"step 2"``, ...
    items : list of str
        The labels of the watched values (one sub-row each; ``[""]`` for one).
    values : list
        ``values[row][item][column]``, the raw values.
    cells : list
        The same, formatted as text.
    transfers : list
        ``transfers[row]``: the messages that started in that step (none for "start").
    """

    def __init__(self, pes, rows, items, values, cells, transfers, title=""):
        self.pes, self.rows, self.items = pes, rows, items
        self.values, self.cells, self.transfers = values, cells, transfers
        self.title = title

    def value(self, step: int, pe: int, item: int | str = 0):
        """The raw value PE ``pe`` holds after ``step`` (0 = start) for one watched item."""
        if isinstance(item, str):
            item = self.items.index(item)
        return self.values[step][item][self.pes.index(pe)]

    def column(self, pe: int, item: int | str = 0) -> list:
        """PE ``pe``'s formatted values, from the start to the last step."""
        if isinstance(item, str):
            item = self.items.index(item)
        col = self.pes.index(pe)
        return [row[item][col] for row in self.cells]

    def transfers_text(self, row: int, fmt=None) -> str:
        """'src->dst: payload' for the messages of one step."""
        fmt = fmt or _format_held
        return ", ".join(f"{m.src}->{m.dst}: {fmt(m.payload)}" for m in self.transfers[row])

    def _labels(self):
        multi = len(self.items) > 1
        out = []
        for r, row in enumerate(self.rows):
            for i, item in enumerate(self.items):
                first = row if i == 0 else ""
                out.append((r, i, f"{first:<7} {item}".rstrip() if multi else row))
        return out

    def __str__(self):
        labels = self._labels()
        width0 = max(len(text) for _, _, text in labels)
        widths = [max(len(f"PE {pe}"), *(len(self.cells[r][i][c]) for r, i, _ in labels))
                  for c, pe in enumerate(self.pes)]
        lines = [" " * width0 + "".join(f"  {f'PE {pe}':>{w}}" for pe, w in zip(self.pes, widths))]
        for r, i, text in labels:
            lines.append(f"{text:<{width0}}" + "".join(
                f"  {self.cells[r][i][c]:>{w}}" for c, w in enumerate(widths)))
        return "\n".join(lines)

    def __repr__(self):
        return str(self)

    def to_html(self, highlight: int | None = None, transfers: bool = True) -> str:
        """An HTML table; ``highlight`` marks one step's row(s), by a background and a mark
        before its name; ``transfers`` adds a column with the messages of each step."""
        esc = html.escape
        head = "".join(f"<th>PE {pe}</th>" for pe in self.pes)
        extra = "<th style='text-align:left'>transfers in this step</th>" if transfers else ""
        body = []
        for r, row in enumerate(self.rows):
            style = " style='background:#fdebd0'" if r == highlight else ""
            name = esc(row) if highlight is None else _marked(esc(row), r == highlight)
            for i, item in enumerate(self.items):
                cells = "".join(f"<td style='text-align:center'>{esc(c)}</td>"
                                for c in self.cells[r][i])
                label = f"<th style='text-align:left'>{name}</th>" if i == 0 else ""
                if i == 0 and len(self.items) > 1:
                    label = (f"<th rowspan='{len(self.items)}' style='text-align:left'>"
                             f"{name}</th>")
                sub = f"<td><i>{esc(item)}</i></td>" if len(self.items) > 1 else ""
                tail = ""
                if transfers and i == 0:
                    span = f" rowspan='{len(self.items)}'" if len(self.items) > 1 else ""
                    tail = (f"<td{span} class='transfers' style='text-align:left;font-size:85%'>"
                            f"{esc(self.transfers_text(r))}</td>")
                body.append(f"<tr{style}>{label}{sub}{cells}{tail}</tr>")
        corner = "<th></th><th></th>" if len(self.items) > 1 else "<th></th>"
        caption = f"<caption>{esc(self.title)}</caption>" if self.title else ""
        return (f"<table class='values-table'>{caption}<thead><tr>{corner}{head}{extra}</tr>"
                f"</thead><tbody>{''.join(body)}</tbody></table>")

    def _repr_html_(self):
        return self.to_html()


#: The mark of the highlighted step's row: its pale background alone was lost on a
#: washed-out screen, in grey and to a reader who does not see the colour.
_MARK = "\u25b6\u00a0"


def _marked(label: str, current: bool) -> str:
    """A row's label with the mark of the current step, or with the mark's room kept (hidden),
    so that the columns do not move as the highlight moves from row to row."""
    if current:
        return f"<span aria-current='step'>{_MARK}{label}</span>"
    return f"<span style='visibility:hidden' aria-hidden='true'>{_MARK}</span>{label}"


def values_table(run, watch=None, *, fmt=None, pes=None) -> ValuesTable:
    """What each PE holds at the start and after each step of a recorded run.

    The end of step s is when the last transfer that started in step s ends
    (:meth:`Run.step`); a PE's value then is read from its last recorded
    state at or before that time.

    Parameters
    ----------
    run : RecordedRun
        From :func:`~collective_lib.recording.record_run`.
    watch : optional
        What to show: the name of a local variable of the program (``"x"``),
        one of the :class:`~collective_lib.recording.PEState` fields
        ``"result"``, ``"received"``, ``"heard"`` (the PEs it has heard from),
        a function of a :class:`~collective_lib.recording.PEState`, or a dict
        ``{label: spec}`` / list of those for several values per PE (one
        sub-row each, as the top and bottom values of Fig. 13.7).  Default:
        what the algorithm declared a PE holds (``held=`` of its registration),
        else the last payload received (the input before that) and finally
        the result.
    fmt : callable, optional
        ``fmt(value) -> str``; default: ``-`` for None, a one-word message
        without brackets, a set of ranks as ranges, a Span as ``x:y``.
    pes : iterable of int, optional
        The PEs to show (all by default).

    Returns
    -------
    ValuesTable
        Prints as a text table and shows as an HTML table in a notebook.

    Examples
    --------
    >>> from collective_lib.recording import record_run
    >>> from collective_lib.spans import span_inputs, span_op
    >>> run = record_run("hypercube_allreduce", 4, inputs=span_inputs(4), op=span_op)
    >>> print(values_table(run))
            PE 0  PE 1  PE 2  PE 3
    start      0     1     2     3
    step 1   0:1   0:1   2:3   2:3
    step 2   0:3   0:3   0:3   0:3
    """
    if not isinstance(run, RecordedRun):
        raise ValueError("values_table needs the states of the PEs: simulate with "
                         "collective_lib.recording.record_run(algorithm, p, ...) instead of "
                         "simulate()")
    fmt = fmt or _format_held
    pes = list(range(run.p)) if pes is None else [int(pe) for pe in pes]
    for pe in pes:
        run._check_pe(pe)
    items = _watch_items(run, watch)
    ends, rows, transfers = [0.0], ["start"], [[]]
    for s in range(1, len(run.step_starts()) + 1):
        messages = run.step(s)
        ends.append(max(msg.end for msg in messages))
        rows.append(f"step {s}")
        transfers.append(messages)
    values = [[[f(run.state(pe, t) if r else run.states[pe][0]) for pe in pes]
               for _, f in items] for r, t in enumerate(ends)]
    cells = [[[fmt(v) for v in item] for item in row] for row in values]
    return ValuesTable(pes, rows, [label for label, _ in items], values, cells, transfers,
                       title=run.name)
