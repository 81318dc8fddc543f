"""Inline SVG charts (matplotlib, Agg backend): nothing external, text kept as SVG text.

matplotlib escapes the text it writes into SVG, so labels taken from a dataset or a model
cannot inject markup.
"""

from __future__ import annotations

import io
import threading
from typing import Any, Sequence

PALETTE = ("#3b73c4", "#e08a2c", "#2e9d4f", "#8e5cc4", "#d1495b", "#5b8c8c", "#8c6d46")
_LOCK = threading.Lock()  # pyplot's state is global


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.fonttype": "none",
            "font.family": "sans-serif",
            "font.size": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "svg.hashsalt": "provbench",
        }
    )
    return plt


def warm_up() -> None:
    """Import pyplot and draw one empty figure (fonts, the SVG backend): what the first chart pays."""
    with _LOCK:
        plt = _pyplot()
        fig = plt.figure(figsize=(1, 1))
        try:
            fig.gca().text(0.5, 0.5, "x")
            to_svg(fig)
        finally:
            plt.close(fig)


def to_svg(fig: Any) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]  # drop the XML prolog and doctype: the SVG is inlined in HTML


def accuracy_chart(
    systems: Sequence[str],
    values: Sequence[float | None],
    intervals: Sequence[tuple[float | None, float | None]],
    title: str,
) -> str:
    """Accuracy per system with bootstrap-interval error bars."""
    with _LOCK:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(systems) + 1.5), 3.2))
        heights = [100 * (v or 0.0) for v in values]
        # an interval may sit a rounding error off its estimate (1/12 as 0.0833... both ways); an
        # error bar below zero length is drawn as none, where matplotlib would refuse the chart
        lower = [max(0.0, 100 * ((v or 0) - lo)) if lo is not None else 0 for v, (lo, _) in zip(values, intervals)]
        upper = [max(0.0, 100 * (hi - (v or 0))) if hi is not None else 0 for v, (_, hi) in zip(values, intervals)]
        ax.bar(
            range(len(systems)), heights, color=PALETTE[0], width=0.6, yerr=[lower, upper], capsize=4, ecolor="#333333"
        )
        ax.set_xticks(range(len(systems)), [plain(s) for s in systems], rotation=20, ha="right")
        ax.set_ylim(0, 105)
        ax.set_ylabel("accuracy (%)")
        ax.set_title(title, fontsize=11)
        ax.grid(axis="y", alpha=0.3)
        svg = to_svg(fig)
        plt.close(fig)
    return svg


def grouped_chart(
    groups: Sequence[str],
    series: dict[str, Sequence[float | None]],
    ylabel: str,
    title: str,
    intervals: dict[str, Sequence[tuple[float | None, float | None] | None]] | None = None,
    scale: str = "share",
) -> str:
    """Bars per group (e.g. intervention) and series (e.g. system): shares 0..1 drawn as percentages
    (``scale="share"``) or counts; error bars from ``intervals``; a missing value is marked "n/m"."""
    factor = 100.0 if scale == "share" else 1.0
    with _LOCK:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(groups) + 2), 3.4))
        width = 0.8 / max(1, len(series))
        for i, (name, values) in enumerate(series.items()):
            xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
            heights = [factor * v if v is not None else 0.0 for v in values]
            ax.bar(
                xs,
                heights,
                width=width,
                label=plain(name),
                color=PALETTE[i % len(PALETTE)],
                yerr=_error_bars(values, (intervals or {}).get(name), factor),
                capsize=3,
                ecolor="#333333",
            )
            for x, v in zip(xs, values):
                if v is None:  # nothing measured: say so where a bar would stand
                    ax.text(x, 1, "n/m", ha="center", va="bottom", fontsize=7, color="#777777", rotation=90)
        ax.set_xticks(range(len(groups)), [plain(g) for g in groups], rotation=20, ha="right")
        if scale == "share":
            ax.set_ylim(0, 105)
        else:  # counts: whole numbers on the axis
            from matplotlib.ticker import MaxNLocator

            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=11)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, frameon=False, ncols=min(3, len(series)))
        svg = to_svg(fig)
        plt.close(fig)
    return svg


def _error_bars(
    values: Sequence[float | None], intervals: Sequence[tuple[float | None, float | None] | None] | None, factor: float
) -> list[list[float]] | None:
    """matplotlib's [below, above] error lengths from (low, high) intervals (none: no bar)."""
    if not intervals:
        return None
    below, above = [], []
    for value, interval in zip(values, intervals):
        low, high = interval or (None, None)
        ok = value is not None and low is not None and high is not None
        below.append(max(0.0, factor * (value - low)) if ok else 0.0)
        above.append(max(0.0, factor * (high - value)) if ok else 0.0)
    return [below, above]


def plain(text: str) -> str:
    """Keep matplotlib from reading ``$...$`` in a label as mathtext."""
    return text.replace("$", r"\$")


def line_chart(
    series: dict[str, Sequence[tuple[float, float]]], xlabel: str, ylabel: str, title: str, diagonal: bool = False
) -> str:
    """Lines through (x, y) points per series; ``diagonal`` adds y = x (perfect calibration)."""
    with _LOCK:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(5.0, 3.6))
        if diagonal:
            ax.plot([0, 1], [0, 1], linestyle="--", color="#999999", linewidth=1)
        for i, (name, points) in enumerate(series.items()):
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            ax.plot(xs, ys, marker="o", markersize=3, label=plain(name), color=PALETTE[i % len(PALETTE)])
        ax.set_xlabel(plain(xlabel))
        ax.set_ylabel(plain(ylabel))
        ax.set_title(plain(title), fontsize=11)
        ax.grid(alpha=0.3)
        if series:
            ax.legend(fontsize=8, frameon=False)
        svg = to_svg(fig)
        plt.close(fig)
    return svg
