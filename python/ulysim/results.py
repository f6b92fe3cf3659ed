"""ulysim.results: what the planning commands return, wrapping the CLI's
JSON output (to_dict() is that JSON, as parsed): the rows of the table, the
recommendation, its per-op breakdown, memory terms and reasons; as pandas
DataFrames when pandas is installed, and readable in a notebook."""
import copy
import html

__all__ = ["Result", "Plan", "MaxSeq", "MinGpus", "Sweep", "Validation"]

GIB = float(1 << 30)
MIB = float(1 << 20)


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def _row_cells(p):
    """One row as the CLI's table shows it (the same columns, units: GiB, MiB)."""
    d, m, s, pl = p["degrees"], p["memory"], p["step"], p["per_layer"]
    comm = pl["comm_bytes_per_rank"]
    return [
        p["strategy"], str(d["ulysses"]), str(d["ring"]), str(d["tp"]), str(d["dp"]), str(d["pp"]),
        _fmt(s.get("micro_batch"), "d"), "yes" if p["feasible"] else "no",
        _fmt(None if m["total_bytes"] is None else m["total_bytes"] / GIB, ".2f"),
        _fmt(m.get("largest"), ""),
        _fmt(None if comm["fwd"] is None else comm["fwd"] / MIB, ".1f"),
        _fmt(None if comm["bwd"] is None else comm["bwd"] / MIB, ".1f"),
        _fmt(s["time_s"], ".4g"),
        _fmt(s["tokens_per_s"] if p["feasible"] else None, ".0f"),
        _fmt(s["tflops_per_gpu"] if p["feasible"] else None, ".1f"),
        _fmt(None if s["mfu"] is None or not p["feasible"] else 100 * s["mfu"], ".1f"),
    ]


_HEAD = ["strategy", "u", "r", "tp", "dp", "pp", "mb", "fits", "mem_GiB", "mem_largest", "fwd_MiB", "bwd_MiB",
         "step_s", "tokens_per_s", "TFLOPs_gpu", "mfu_pct"]


class Result:
    """A planning command's answer: the CLI's JSON, with accessors."""

    command = None

    def __init__(self, data, argv=None, status=0):
        self._data = data
        self.argv = list(argv) if argv is not None else None
        self.status = status

    # ---------------------------------------------------------- the data
    def to_dict(self):
        """The CLI's --format json output, parsed (a deep copy)."""
        return copy.deepcopy(self._data)

    @property
    def config(self):
        """The resolved request: model, cluster, workload, strategies, pins."""
        return self._data["config"]

    @property
    def rows(self):
        """Every row of the table, as the CLI's JSON gives them."""
        return self._data["plans"]

    @property
    def recommended(self):
        """The recommended row, or None when nothing fits."""
        i = self._data.get("recommended")
        return None if i is None else self._data["plans"][i]

    @property
    def recommended_strategy(self):
        return self._data.get("recommended_strategy")

    @property
    def why(self):
        """Why the recommendation wins (the CLI's sentence)."""
        return self._data.get("why")

    @property
    def notes(self):
        return self._data.get("notes", [])

    @property
    def reasons(self):
        """{strategy: [reason, ...]}: why each row does not fit, or what it assumed."""
        return {p["strategy"]: p.get("reasons", []) for p in self.rows}

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    # ------------------------------------------------------------ pandas
    def to_pandas(self):
        """The rows as a DataFrame, nested fields flattened with dots
        (degrees.ulysses, memory.total_bytes, step.tokens_per_s, ...)."""
        import pandas as pd

        return pd.json_normalize(self.rows)

    # ------------------------------------------------------------ display
    def _title(self):
        c = self.config
        return "%s: %s on %s" % (self._data.get("command", self.command), c["model"]["name"], c["cluster"]["name"])

    def _table(self):
        rows = [_row_cells(p) for p in self.rows]
        rec = self._data.get("recommended")
        if rec is not None and 0 <= rec < len(rows):
            rows[rec][0] += "*"
        return rows

    def __repr__(self):
        rows = [_HEAD] + self._table()
        widths = [max(len(r[i]) for r in rows) for i in range(len(_HEAD))]
        lines = ["<ulysim %s>" % self._title()]
        lines += ["  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
                  for r in rows]
        if self.why:
            lines.append("recommended: %s: %s" % (self.recommended_strategy, self.why))
        return "\n".join(lines)

    def _repr_html_(self):
        esc = html.escape
        out = ["<div><b>ulysim %s</b>" % esc(self._title()), "<table><thead><tr>"]
        out += ["<th>%s</th>" % esc(h) for h in _HEAD]
        out.append("</tr></thead><tbody>")
        rec = self._data.get("recommended")
        for i, r in enumerate(self._table()):
            style = ' style="font-weight:bold"' if i == rec else ""
            out.append("<tr%s>%s</tr>" % (style, "".join("<td>%s</td>" % esc(c) for c in r)))
        out.append("</tbody></table>")
        if self.why:
            out.append("<p>recommended: <b>%s</b>: %s</p>" % (esc(str(self.recommended_strategy)), esc(self.why)))
        out.append("</div>")
        return "".join(out)


class Plan(Result):
    """ulysim.plan(): one row per strategy at its best layout, the
    recommendation, and the recommendation's per-layer operations."""

    command = "plan"

    @property
    def operations(self):
        """The recommendation's per-layer operations (name, phase, kind,
        bytes, FLOPs, time_s, exposed_s, ...), or [] when nothing fits."""
        ops = self._data.get("operations")
        return ops["ops"] if ops else []

    @property
    def memory(self):
        """The recommendation's memory terms in bytes ({term: bytes}), or None."""
        r = self.recommended
        return None if r is None else dict(r["memory"]["terms"])

    def operations_pandas(self):
        import pandas as pd

        return pd.DataFrame(self.operations)

    def plot(self, figure="breakdown", ax=None, **kwargs):
        """The figure of `ulysim plot FIGURE` for this request (breakdown,
        memory), drawn with matplotlib from the same data."""
        from . import plot

        return plot.figure(figure, self.argv, ax=ax, **kwargs)


class MaxSeq(Result):
    """ulysim.max_seq(): the longest sequence each strategy fits."""

    command = "max-seq"


class MinGpus(Result):
    """ulysim.min_gpus(): the fewest GPUs each strategy needs."""

    command = "min-gpus"


class Sweep(Result):
    """ulysim.sweep(): every strategy's best layout at each (GPUs, sequence)."""

    command = "sweep"

    def _title(self):
        return "sweep: %s on %s, %d rows" % (self.config["model"]["name"], self.config["cluster"]["name"], len(self))


class Validation:
    """ulysim.validate_runs(): `ulysim validate --runs` as JSON."""

    def __init__(self, data, argv=None, status=0):
        self._data = data
        self.argv = argv
        self.status = status

    def to_dict(self):
        return copy.deepcopy(self._data)

    @property
    def passed(self):
        """False when a limit given (max_error, max_run_error) was exceeded (the CLI's exit 1)."""
        return self.status == 0

    def to_pandas(self):
        import pandas as pd

        rows = self._data.get("runs") or self._data.get("rows") or []
        return pd.json_normalize(rows)

    def __repr__(self):
        return "<ulysim validate --runs: %s, %s>" % (
            "passed" if self.passed else "limits exceeded", ", ".join(sorted(self._data))[:200])
