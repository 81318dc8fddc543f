"""What a plugin may put in a report: sections made of text, tables and charts.

A plugin implements ``provbench_report_sections(run)`` (see :mod:`provbench.hookspecs`) and
returns :class:`Section` objects built from the run's data (:class:`provbench.results.data.RunData`:
manifest, questions, records and metric values). The core renders them: every string is
autoescaped, and charts are drawn by the core from numbers, so no plugin ever writes markup.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Cell(_Block):
    """A table cell: the value as text, with optional counts, arrow, interval and note."""

    text: str = "–"
    counts: str = ""
    arrow: str = ""
    interval: str = ""
    note: str = ""

    def marked(self, mark: str) -> "Cell":
        """This cell with † and ``mark`` (why its number is not certified) added to its note; as
        it was when ``mark`` is empty (:func:`provbench.results.validity.cell_mark`)."""
        if mark:
            self.text, self.note = f"{self.text} †", "; ".join(filter(None, (self.note, mark)))
        return self


def _cell(value: Any) -> Any:
    if isinstance(value, Cell) or isinstance(value, dict):
        return value
    if value is None:
        return Cell()
    if isinstance(value, float):
        return Cell(text=f"{value:.3g}")
    return Cell(text=str(value))


class Row(_Block):
    """A table row; ``group`` makes it a full-width heading row (Table 2's row groups)."""

    cells: list[Cell] = Field(default_factory=list)
    group: str | None = None

    @field_validator("cells", mode="before")
    @classmethod
    def _wrap(cls, cells: Any) -> Any:
        return [_cell(c) for c in cells]


class Text(_Block):
    kind: Literal["text"] = "text"
    text: str


class Table(_Block):
    """``columns`` are headers; cells from ``numeric_from`` on are right-aligned numbers."""

    kind: Literal["table"] = "table"
    columns: list[str]
    rows: list[Row]
    caption: str = ""
    numeric_from: int = 1
    css_class: str = Field(default="", pattern=r"^[a-z0-9 _-]*$")

    @field_validator("rows", mode="before")
    @classmethod
    def _wrap_rows(cls, rows: Any) -> Any:
        return [r if isinstance(r, (Row, dict)) else Row(cells=list(r)) for r in rows]


class BarChart(_Block):
    """Grouped bars: one bar per series in each category. ``scale="share"``: values are shares in
    [0, 1], drawn as percentages; ``"count"``: plain counts (a histogram). A value of None is
    marked "n/m" (not measured), never drawn as a zero bar. ``intervals`` (optional, per series,
    one (low, high) or None per category, in the values' scale) draw error bars."""

    kind: Literal["bar_chart"] = "bar_chart"
    title: str
    categories: list[str]
    series: dict[str, list[float | None]]
    ylabel: str = ""
    caption: str = ""
    scale: Literal["share", "count"] = "share"
    intervals: dict[str, list[tuple[float | None, float | None] | None]] = Field(default_factory=dict)


class LineChart(_Block):
    """Lines through (x, y) points per series, e.g. risk-coverage curves or reliability diagrams;
    ``diagonal`` draws y = x for reference."""

    kind: Literal["line_chart"] = "line_chart"
    title: str
    series: dict[str, list[tuple[float, float]]]
    xlabel: str = ""
    ylabel: str = ""
    caption: str = ""
    diagonal: bool = False


Block = Annotated[Union[Text, Table, BarChart, LineChart], Field(discriminator="kind")]


class Section(_Block):
    """A titled part of the report. ``order`` places it (core sections use 0-20 and 900+)."""

    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]*$")
    title: str
    intro: str = ""
    blocks: list[Block] = Field(default_factory=list)
    order: int = 100
