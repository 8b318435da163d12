"""The gallery's panel "What this matrix can tell": from the phase matrix's `power` block, per
group of datasets (a language, a benchmark, all of them) on a system, how many queries it
pools, the smallest effect it can detect (MDE), and which arms it has decided — positive,
negative or flat — leaving the undecided ones counted.

The block: `crmatrix.results.pool.Power` (`crmatrix.analysis.matrix.power` computes it).
"""

from __future__ import annotations

import html

from crmatrix.results.pool import Judged, Power

DECIDED = ("positive", "negative", "flat")


def _number(x: float | None, fmt: str) -> str:
    return "—" if x is None else format(x, fmt)


def _arm(name: str, a: Judged) -> str:
    low, high = a.ci
    return (f'<span class="{html.escape(a.verdict)}"><b>{html.escape(name)}</b> {a.verdict} '
            f'{a.delta:+.3f} [{low:+.3f}, {high:+.3f}]</span>')


def _decided(arms: dict[str, Judged]) -> str:
    decided = [_arm(name, arms[name]) for name in sorted(arms) if arms[name].verdict in DECIDED]
    undecided = sum(a.verdict not in DECIDED for a in arms.values())
    return "; ".join(decided or ["none"]) + (f" <i>({undecided} undecided)</i>" if undecided else "")


def panel(power: Power) -> str:
    """The panel's HTML."""
    rows = "\n".join(
        f"<tr><td>{html.escape(g.group)} <small>({html.escape(g.kind)})</small></td>"
        f"<td>{html.escape(g.system)}</td><td>{g.datasets}</td><td>{g.queries}</td>"
        f"<td>{_number(g.mde, '.3f')}</td><td>{_decided(g.arms)}</td></tr>"
        for g in power.groups)
    metric = html.escape(power.metric)
    return (f'<section id="power"><h2>What this matrix can tell</h2>\n'
            f"<p>Per group of datasets on a system: the queries it pools, the smallest Δ {metric} it detects "
            f"(MDE, at α {power.alpha:g} with {power.target_power:.0%} power; {html.escape(power.method)}) "
            f"and the arms whose Δ {metric} against the baseline it has decided, each with its interval.</p>\n"
            f"<table><thead><tr><th>group</th><th>system</th><th>datasets</th><th>queries</th><th>MDE</th>"
            f"<th>decided arms</th></tr></thead>\n<tbody>\n{rows}\n</tbody></table></section>")
