"""ulysim.plot: the figures of `ulysim plot` drawn with matplotlib, for
notebooks. The data is the CLI's own: each function runs `ulysim plot FIGURE
--data-only` in process and draws the CSV it writes, with the axis labels
and legend names of plots/FIGURE.gp (the labels come from the CSV's label
columns, as the gnuplot scripts take them)."""
import csv
import os
import shutil
import tempfile

from . import _cli

__all__ = ["figure", "data", "throughput", "breakdown", "memory", "max_seq"]

# plots/memory.gp's terms (CSV column prefix) and legend labels, in its order
_MEM_TERMS = [("weights", "weights"), ("grads", "gradients"), ("optimizer", "optimizer states"),
              ("activations", "activations"), ("working", "working (1 layer)"), ("scores", "attention scores"),
              ("comm_buffers", "comm. buffers"), ("zero3_gather", "ZeRO-3 gather"), ("logits", "logits"),
              ("reserved", "reserved")]
_MEM_COLOURS = ["#08519c", "#08519c", "#6baed6", "#fd8d3c", "#d94801", "#7f2704", "#238b45", "#a1d99b", "#6a51a3",
                "#bdbdbd"]
GIB = float(1 << 30)


def _planning_flags(argv):
    """A planning command's argv (Plan.argv) without its command and --format."""
    out, skip = [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
        elif i == 0 and not a.startswith("-"):
            continue
        elif a == "--format":
            skip = True
        elif not a.startswith("--format="):
            out.append(a)
    return out


def data(name, argv=None, **kwargs):
    """The rows of figure `name` (`ulysim plot NAME --data-only`), as a list
    of dicts of strings, numbers converted where they parse."""
    flags = _planning_flags(argv) if argv is not None else _cli.to_argv(None, kwargs)
    tmp = tempfile.mkdtemp(prefix="ulysim-plot-")
    try:
        out = os.path.join(tmp, name + ".png")
        _cli.run(["plot", name, "--data-only", "-o", out] + flags)
        with open(os.path.join(tmp, name + ".csv"), encoding="utf-8") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for r in rows:
        for k, v in r.items():
            try:
                r[k] = int(v)
            except (TypeError, ValueError):
                try:
                    r[k] = float(v)
                except (TypeError, ValueError):
                    pass
    return rows


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(5.5, 4))
    return ax


def _by_strategy(rows):
    order = sorted({(r["sidx"], r["strategy"], r["label"]) for r in rows})
    return [(s, label, [r for r in rows if r["strategy"] == s]) for _, s, label in order]


def throughput(ax=None, **kwargs):
    """TFLOP/s per GPU against sequence length, a line per strategy; points
    that do not fit drawn open (plots/throughput.gp). Defaults as `ulysim
    plot throughput`: gpus=32, seq="16K..4M", spread="all"."""
    rows = data("throughput", **kwargs)
    ax = _axes(ax)
    for i, (s, label, rs) in enumerate(_by_strategy(rows)):
        fit = [r for r in rs if r["fits"] == 1]
        oom = [r for r in rs if r["oom"] == 1]
        line, = ax.plot([r["seq"] for r in fit], [r["tflops_per_gpu"] for r in fit], marker="o", ms=4, label=label)
        if oom:
            ax.plot([r["seq"] for r in oom], [r["tflops_per_gpu"] for r in oom], ls="none", marker="o", ms=4,
                    mfc="none", color=line.get_color())
    ax.plot([], [], ls="none", marker="o", mfc="none", color="black", label="out of memory")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("sequence length (tokens)")
    ax.set_ylabel("TFLOP/s per GPU")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3)
    return ax


def breakdown(ax=None, argv=None, **kwargs):
    """Step time split into compute, exposed communication, optimizer + DP
    sync, and overlapped communication below, per strategy (plots/breakdown.gp)."""
    rows = data("breakdown", argv=argv, **kwargs)
    ax = _axes(ax)
    y = list(range(len(rows)))
    c = [r["compute_s"] for r in rows]
    e = [r["comm_exposed_s"] for r in rows]
    f = [r["step_fixed_s"] for r in rows]
    ax.barh([v - 0.16 for v in y], c, height=0.44, color="#4c72b0", edgecolor="black", label="compute")
    ax.barh([v - 0.16 for v in y], e, left=c, height=0.44, color="#dd8452", edgecolor="black", label="exposed comm.")
    ax.barh([v - 0.16 for v in y], f, left=[a + b for a, b in zip(c, e)], height=0.44, color="#8c8c8c",
            edgecolor="black", label="optimizer + DP sync")
    ax.barh([v + 0.23 for v in y], [r["comm_overlapped_s"] for r in rows], height=0.22, color="white",
            edgecolor="black", hatch="////", label="overlapped comm.")
    ax.set_yticks(y, ["%s\n%s" % (r["label_short"], r["layout"]) for r in rows], fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("time per optimizer step (s)")
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)
    return ax


def memory(ax=None, argv=None, **kwargs):
    """Memory per GPU by term, a stacked bar per strategy, the HBM limit
    dashed (plots/memory.gp)."""
    rows = data("memory", argv=argv, **kwargs)
    ax = _axes(ax)
    y = list(range(len(rows)))
    left = [0.0] * len(rows)
    for (term, label), colour in zip(_MEM_TERMS, _MEM_COLOURS):
        w = [r[term + "_bytes"] / GIB for r in rows]
        if any(w):
            ax.barh(y, w, left=left, color=colour, edgecolor="black", label=label)
        left = [a + b for a, b in zip(left, w)]
    hbm = max(r["capacity_bytes"] for r in rows) / GIB
    ax.axvline(hbm, color="black", ls="--", lw=1.2, label="HBM, %.0f GiB" % hbm)
    ax.set_yticks(y, ["%s\n%s" % (r["label_short"], r["layout"]) for r in rows], fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("memory per GPU (GiB)")
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3)
    return ax


def max_seq(ax=None, **kwargs):
    """The longest sequence each strategy fits against GPU count (plots/max-seq.gp)."""
    rows = data("max-seq", **kwargs)
    ax = _axes(ax)
    groups = _by_strategy(rows)
    gpus = sorted({r["gpus"] for r in rows})
    width = 0.8 / max(1, len(groups))
    for i, (s, label, rs) in enumerate(groups):
        at = {r["gpus"]: r["max_seq"] for r in rs}
        ax.bar([k + (i - (len(groups) - 1) / 2) * width for k in range(len(gpus))], [at.get(g, 0) for g in gpus],
               width=width, label=label)
    ax.set_xticks(range(len(gpus)), [str(g) for g in gpus])
    ax.set_yscale("log", base=2)
    ax.set_xlabel("GPUs")
    ax.set_ylabel("longest sequence that fits (tokens)")
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3)
    return ax


_FIGURES = {"throughput": throughput, "breakdown": breakdown, "memory": memory, "max-seq": max_seq}


def figure(name, argv=None, ax=None, **kwargs):
    """Figure `name` (throughput, breakdown, memory, max-seq); argv: a
    result's command line (Plan.argv), else the keyword arguments."""
    try:
        draw = _FIGURES[name.replace("_", "-")]
    except KeyError:
        raise ValueError("figure %r (valid: %s)" % (name, ", ".join(_FIGURES))) from None
    if argv is not None:
        return draw(ax=ax, argv=argv) if draw in (breakdown, memory) else draw(ax=ax, **kwargs)
    return draw(ax=ax, **kwargs)
