"""DIR/frontier.png: DU against DR (paper 000 Figure 3: DU on the x axis, DR on the y axis; the frontier is
the lower right), the frontier joined by a line, the chosen release labelled. matplotlib, Agg backend."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence


def plot_frontier(rows: Sequence[dict[str, Any]], choice: dict[str, Any], path: str | Path,
                  title: str = "Release planner: risk-utility frontier", risk_label: str = "DR") -> Path:
    """``rows``: frontier.json's candidate objects (``DU``, ``frontier``, ``optimal``, ``name`` and the risk the
    choice was made on: ``risk_measure.value``, else ``DR``), ``risk_label`` its name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    fig, ax = plt.subplots(figsize=(7.5, 5.5), dpi=120)
    rows = [{**r, "DR": (r.get("risk_measure") or {"value": r["DR"]})["value"]} for r in rows]
    placed = [r for r in rows if r["DR"] is not None and r["DU"] is not None]
    others = [r for r in placed if not r["frontier"]]
    front = sorted((r for r in placed if r["frontier"]), key=lambda r: (r["DU"], -r["DR"]))
    if others:
        ax.scatter([r["DU"] for r in others], [r["DR"] for r in others], color="0.6", s=30, label="dominated",
                   zorder=2)
    if front:
        ax.plot([r["DU"] for r in front], [r["DR"] for r in front], "-o", color="tab:blue", ms=6,
                label="frontier (eq. 2.7)", zorder=3)
    for r in placed:
        ax.annotate(r["name"], (r["DU"], r["DR"]), textcoords="offset points", xytext=(4, 4), fontsize=7,
                    color="0.3")
    chosen = next((r for r in placed if r.get("optimal")), None)
    if chosen is not None:
        ax.scatter([chosen["DU"]], [chosen["DR"]], s=160, facecolors="none", edgecolors="tab:red", linewidths=2,
                   zorder=4, label=f"chosen: {chosen['name']}")
        ax.annotate(f"chosen: {chosen['name']}\n{risk_label}={chosen['DR']:.6g}, DU={chosen['DU']:.4g}",
                    (chosen["DU"], chosen["DR"]), textcoords="offset points", xytext=(10, -28), fontsize=8,
                    color="tab:red", arrowprops={"arrowstyle": "-", "color": "tab:red"})
        xs = [r["DU"] for r in placed]
        lo, hi = min(xs), max(xs)
        pad = (hi - lo) * 0.1 or 0.05
        if choice.get("rule") == "tradeoff":
            a = choice["parameter"]
            c = chosen["DR"] - a * chosen["DU"]
            grid = [lo - pad, hi + pad]
            ax.plot(grid, [c + a * x for x in grid], "--", color="tab:red", lw=1,
                    label=f"{risk_label} = c + a·DU, a={a:g} (eq. 2.8)")
    if choice.get("rule") == "max_risk":
        ax.axhline(choice["parameter"], ls="--", color="tab:red", lw=1, label=f"{risk_label} ≤ {choice['parameter']:g} (eq. 2.6)")
    ax.set_xlabel("DU (eq. 2.19): utility, higher is better")
    ax.set_ylabel(f"{risk_label}: risk, lower is better")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
