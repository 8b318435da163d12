"""The gallery's panel "What this matrix can tell": from the phase matrix's `power` block, per
group of datasets (a language, a benchmark, all of them) on a system, how many queries it
pools, the smallest effect it can detect (MDE: the median over the arms that move queries),
and each arm with its own MDE and the share of queries it moved: the ones it has decided —
positive, negative or flat — with their intervals, then the undecided ones.

The block: `crmatrix.results.pool.Power` (`crmatrix.analysis.matrix.power` computes it).
"""

from __future__ import annotations

import html

from crmatrix.analysis.matrix.panels import group_mde_text, one_arm_text
from crmatrix.results.pool import Judged, Power, PowerGroup

DECIDED = ("positive", "negative", "flat")


def _own(a: Judged, queries: int) -> str:
    return f"MDE ±{a.mde:.3f}" + (f", moved {a.moved / queries:.0%}" if queries else "")


def _arm(name: str, a: Judged, queries: int) -> str:
    low, high = a.ci
    return (f'<span class="{html.escape(a.verdict)}"><b>{html.escape(name)}</b> {a.verdict} '
            f'{a.delta:+.3f} [{low:+.3f}, {high:+.3f}] <small>({_own(a, queries)})</small></span>')


def _decided(g: PowerGroup) -> str:
    decided = [_arm(name, g.arms[name], g.queries) for name in sorted(g.arms) if g.arms[name].verdict in DECIDED]
    undecided = [f"{html.escape(name)} <small>({_own(g.arms[name], g.queries)})</small>"
                 for name in sorted(g.arms) if g.arms[name].verdict not in DECIDED]
    return "; ".join(decided or ["none"]) + (f" <i>(undecided: {'; '.join(undecided)})</i>" if undecided else "")


def panel(power: Power, arms: tuple[str, ...], baseline: str) -> str:
    """The panel's HTML; `arms`: the matrix's (the baseline alone: nothing to tell, and why)."""
    head = '<section id="power"><h2>What this matrix can tell</h2>\n'
    if arms == (baseline,):
        return f"{head}<p>{html.escape(one_arm_text(baseline))}</p></section>"
    rows = "\n".join(
        f"<tr><td>{html.escape(g.group)} <small>({html.escape(g.kind)})</small></td>"
        f"<td>{html.escape(g.system)}</td><td>{g.datasets}</td><td>{g.queries}</td>"
        f"<td>{html.escape(group_mde_text(g, power.moved_share))}</td><td>{_decided(g)}</td></tr>"
        for g in power.groups)
    metric = html.escape(power.metric)
    return (f"{head}<p>Per group of datasets on a system: the queries it pools, the smallest Δ {metric} it "
            f"detects (MDE, at α {power.alpha:g} with {power.target_power:.0%} power; {html.escape(power.method)}): "
            f"the median of the MDEs of the arms that moved at least {power.moved_share * 100:.0f} % of its queries, "
            f"and each arm with its own MDE and the share of the queries it moved, the ones whose Δ {metric} "
            f"against the baseline it has decided with their intervals.</p>\n"
            f"<table><thead><tr><th>group</th><th>system</th><th>datasets</th><th>queries</th><th>MDE</th>"
            f"<th>arms</th></tr></thead>\n<tbody>\n{rows}\n</tbody></table></section>")
