"""Model and Cluster from dicts, Model.from_hf, the matplotlib figures and
validate_runs, each against what the ulysim executable answers for the
same input."""
import json
import pathlib

import os

import pytest

import ulysim

ROOT = pathlib.Path(__file__).resolve().parents[2]


def without_names(d):
    """A plan's JSON without the model's and cluster's name and source (a file's path, not a preset's name)."""
    d = json.loads(json.dumps(d))
    for part in ("model", "cluster"):
        for k in ("name", "source"):
            d["config"][part].pop(k, None)
    return d


def test_model_from_dict_prices_as_the_preset(cli_json):
    spec = json.loads((ROOT / "sim/presets/models/llama3-70b.json").read_text())
    got = ulysim.plan(model=ulysim.Model(spec), gpus=64, seq="256K")
    want = cli_json("plan", "--model", "llama3-70b", "--gpus", "64", "--seq", "256K")
    assert without_names(got.to_dict()) == without_names(want)


def test_model_from_hf_llama3_8b(cli_json):
    hf = {"architectures": ["LlamaForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
          "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
          "vocab_size": 128256, "tie_word_embeddings": False, "attention_dropout": 0.0, "model_type": "llama"}
    m = ulysim.Model.from_hf(hf)
    assert (m["layers"], m["hidden"], m["heads"], m["kv_heads"], m["head_dim"], m["ffn_hidden"], m["vocab"]) == (
        32, 4096, 32, 8, 128, 14336, 128256)
    assert m["swiglu"] is True and m["tied_embeddings"] is False and m["dropout"] is False
    got = ulysim.plan(model=m, gpus=32, seq="128K")
    want = cli_json("plan", "--model", "llama3-8b", "--gpus", "32", "--seq", "128K")
    assert without_names(got.to_dict()) == without_names(want)


def test_model_from_hf_moe():
    # a Mixtral-style config: its experts read as the CLI's --model reads them;
    # without the top-k the reader names the missing key
    hf = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 256,
          "vocab_size": 100, "num_local_experts": 8, "model_type": "mixtral"}
    with pytest.raises(ulysim.UsageError, match="num_experts_per_tok"):
        ulysim.Model.from_hf(hf)
    m = ulysim.Model.from_hf(dict(hf, num_experts_per_tok=2))
    assert (m["experts"], m["topk"], m["moe_ffn_hidden"]) == (8, 2, 256)
    # and the Model prices as the CLI prices the config
    got = ulysim.plan(model=m, gpus=8, seq="8K", ep=8)
    assert got.recommended["degrees"]["ep"] == 8


def test_model_from_hf_window(cli_json):
    # a sliding window on half the layers (gpt-oss's layer_types): flat in the
    # model-file format, and the Model prices as the CLI prices the config
    hf = {"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 512,
          "vocab_size": 100, "model_type": "mistral", "sliding_window": 64,
          "layer_types": ["sliding_attention", "full_attention"] * 2}
    m = ulysim.Model.from_hf(hf)
    assert (m["attn_window"], m["window_layers"]) == (64, 2)
    d = ulysim.plan(model=m, gpus=8, seq="8K").to_dict()
    assert d["config"]["model"]["sliding_window"] == {"tokens": 64, "layers": 2}


def test_model_from_hf_path_as_cli(cli_json):
    # a directory holding config.json: the model the CLI's --model makes of it
    d = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "sim", "hf", "Meta-Llama-3-8B")
    m = ulysim.Model.from_hf(d)
    want = cli_json("plan", "--model", os.path.abspath(d), "--gpus", "8", "--seq", "8K")["config"]["model"]
    assert all(m[k] == want[k] for k in ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab",
                                         "swiglu", "tied_embeddings", "dropout"))


def test_cluster_override(cli_json):
    c = ulysim.Cluster.from_preset("dgx-h100", nodes=16)
    got = ulysim.plan(cluster=c, gpus=128, seq="1M")
    want = cli_json("plan", "--gpus", "128", "--seq", "1M")
    assert without_names(got.to_dict())["plans"] == without_names(want)["plans"]
    with pytest.raises(ulysim.UsageError):
        ulysim.plan(cluster=ulysim.Cluster.from_preset("dgx-h100", gpus_per_node=0))


def test_validate_runs_path_and_dataframe(cli_json):
    runs = ROOT / "tests/sim/plot/data/runs-narrow.csv"
    want = cli_json("validate", "--runs", str(runs))
    got = ulysim.validate_runs(runs)
    assert got.to_dict() == want and got.passed
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(runs, comment="#")
    got = ulysim.validate_runs(df)
    drop_line = lambda rows: [{k: v for k, v in r.items() if k != "line"} for r in rows]  # the file's line numbers
    assert drop_line(got.to_dict()["rows"]) == drop_line(want["rows"])


def test_plan_parts_and_display():
    p = ulysim.plan(gpus=64, seq="1M")
    d = p.to_dict()
    assert p.recommended == d["plans"][d["recommended"]]
    assert p.memory == d["plans"][d["recommended"]]["memory"]["terms"]
    assert p.operations == d["operations"]["ops"] and len(p.operations) > 10
    assert set(p.reasons) == {r["strategy"] for r in d["plans"]}
    r = repr(p)
    assert "usp*" in r.replace(" ", "") or "%s*" % d["recommended_strategy"] in r
    assert "<table>" in p._repr_html_()
    pd = pytest.importorskip("pandas")
    df = p.to_pandas()
    assert list(df["strategy"]) == [row["strategy"] for row in d["plans"]]
    assert list(df["step.tokens_per_s"].fillna(-1)) == [
        -1 if row["step"]["tokens_per_s"] is None else row["step"]["tokens_per_s"] for row in d["plans"]]


def test_throughput_plot_has_the_cli_data_and_labels(cli, tmp_path):
    pytest.importorskip("matplotlib")
    import csv

    rc, _, err = cli("plot", "throughput", "--data-only", "-o", str(tmp_path / "t.png"), "--gpus", "16",
                     "--seq", "32K..512K")
    assert rc == 0, err
    with open(tmp_path / "t.csv") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    ax = ulysim.plot.throughput(gpus=16, seq="32K..512K")
    assert ax.get_xlabel() == "sequence length (tokens)" and ax.get_ylabel() == "TFLOP/s per GPU"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    want_labels = []
    for r in rows:
        if r["label"] not in want_labels:
            want_labels.append(r["label"])
    assert sorted(labels) == sorted(want_labels + ["out of memory"])
    drawn = {}
    for line in ax.get_lines():
        for x, y in zip(line.get_xdata(), line.get_ydata()):
            drawn[(int(x), round(float(y), 6))] = True
    for r in rows:
        assert (int(r["seq"]), round(float(r["tflops_per_gpu"]), 6)) in drawn


def test_plan_plot_breakdown():
    pytest.importorskip("matplotlib")
    p = ulysim.plan(gpus=64, seq="1M")
    ax = p.plot()
    assert ax.get_xlabel() == "time per optimizer step (s)"
    ax = p.plot("memory")
    assert ax.get_xlabel() == "memory per GPU (GiB)"
