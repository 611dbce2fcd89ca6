"""space_time: every transfer an arrow from (start, sender) to (end, receiver)."""
from collective_lib import catalog, viz


def by_gid(ax, gid):
    return [a for a in ax.patches if a.get_gid() == gid]


def test_space_time_draws_every_message_pe0_on_top_and_the_total_time():
    run = catalog()["linear_pipeline_broadcast"].simulate(p=5, m=3, k=3)
    ax = viz.space_time(run)
    arrows = by_gid(ax, "message")
    assert len(arrows) == len(run.messages) == 4 * 3
    bottom, top = ax.get_ylim()
    assert bottom > top                              # y grows downwards: PE 0 at the top
    assert [t.get_text() for t in ax.texts] == [f"T = {run.time:g}"] == ["T = 6"]
    assert ax.get_xlabel() == "time (units of the model)"
