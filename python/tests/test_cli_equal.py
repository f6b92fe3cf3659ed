"""ulysim.plan() and the other planning functions give what the ulysim
executable gives: for 60 requests drawn at random (seeded) across commands,
strategies, models, clusters and flags, to_dict() equals `ulysim ...
--format json` parsed, and a request the CLI refuses (exit 2) raises a
ulysim.UsageError carrying the CLI's line. The command line here is written
out from the drawn flags by this test, not by the package."""
import json
import random

import pytest

import ulysim

MODELS = ["llama3-8b", "llama3-70b", "llama2-7b", "gpt-7b", "gpt-30b", "bert-large", "gpt3-175b", "llama3-405b"]
CLUSTERS = ["dgx-h100", "dgx-a100-80g", "dgx-h200", "gb200-nvl72", "a800", "pcie-l40s", "dgx-a100-40g"]
STRATEGIES = ["ulysses", "ring", "rsa", "allgather-cp", "megatron-sp", "usp", "megatron-tp"]
FUNCS = {"plan": ulysim.plan, "max-seq": ulysim.max_seq, "min-gpus": ulysim.min_gpus, "sweep": ulysim.sweep}

# optional flags: (flag, values to draw from); None: a switch
OPTIONAL = [
    ("--strategy", ["ulysses", "ring", "usp", "megatron-sp", "allgather-cp", "ring,ulysses", "all", "rsa"]),
    ("--dtype", ["bf16", "fp16", "fp32"]),
    ("--recompute", ["none", "selective", "full"]),
    ("--zero", [0, 1, 2, 3]),
    ("--no-causal", None),
    ("--no-flash", None),
    ("--split", ["zigzag", "contiguous"]),
    ("--framework", ["deepspeed", "megatron", "fsdp"]),
    ("--batch", [1, 2, 4]),
    ("--global-batch", [16, 64, 96]),
    ("--tp", [2, 4, 8]),
    ("--ulysses", [2, 4, 8]),
    ("--ring", [2, 4]),
    ("--pp", [2, 4, "auto"]),
    ("--tensor-model-parallel-size", [2, 8]),
    ("--context-parallel-size", [2, 4]),
    ("--sequence-parallel", None),
    ("--micro-batch-size", [1, 2]),
    ("--nic-bw", ["200Gb/s", "50GB/s", "3"]),
    ("--intra-bw", ["300GB/s", "900GB/s"]),
    ("--gpus-per-node", [4, 8]),
    ("--oversub", [1, 2]),
    ("--attn-density", [0.5, 0.25, 1.5]),
    ("--ffn-chunks", [2, 4]),
    ("--loss-chunks", [4, 8]),
    ("--tp-comm-overlap", None),
    ("--no-overlap-grad-reduce", None),
    ("--cuda-graphs", None),
    ("--grad-reduce-in-bf16", None),
    ("--no-gradient-accumulation-fusion", None),
    ("--scatter-gather-tensors-in-pipeline", None),
    ("--cross-entropy-loss-fusion", None),
    ("--cross-entropy-fusion-impl", ["native", "te"]),
    ("--step-overhead-ms", [0, 12.5]),
    ("--zero-prefetch", [1, 2]),
    ("--attn-kernel", ["flash2", "flash3", "sdpa", "triton"]),
]


def draw(rng):
    """One request: (command, [(flag, value)]), value None for a switch."""
    cmd = rng.choice(["plan"] * 7 + ["max-seq", "min-gpus", "sweep", "sweep"])
    flags = [("--model", rng.choice(MODELS)), ("--cluster", rng.choice(CLUSTERS))]
    if cmd == "sweep":
        flags.append(("--gpus", rng.choice([[8, 16], [16, 64], "8..32"])))
        flags.append(("--seq", rng.choice([["32K", "128K"], "64K..256K", [131072]])))
    elif cmd == "min-gpus":
        flags.append(("--seq", rng.choice(["32K", "128K", 262144, "1M"])))
    else:
        flags.append(("--gpus", rng.choice([8, 16, 32, 64, 128, 256])))
        if cmd == "plan" or rng.random() < 0.5:
            flags.append(("--seq", rng.choice(["16K", "64K", 131072, "256K", "1M", "2^19"])))
    for flag, values in rng.sample(OPTIONAL, rng.randint(0, 4)):
        flags.append((flag, None if values is None else rng.choice(values)))
    return cmd, flags


def typed(value):
    """The value as one would type it on the command line."""
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def as_call(flags):
    """The same flags as keyword arguments: --no-x=False, --x (switch)=True."""
    kwargs = {}
    for flag, value in flags:
        if value is None and flag.startswith("--no-"):
            kwargs[flag[5:].replace("-", "_")] = False
        else:
            kwargs[flag[2:].replace("-", "_")] = True if value is None else value
    return kwargs


def as_argv(cmd, flags):
    argv = [cmd]
    for flag, value in flags:
        argv += [flag] if value is None else [flag, typed(value)]
    return argv


REQUESTS = [draw(random.Random(3800 + i)) for i in range(60)]


@pytest.mark.parametrize("cmd,flags", REQUESTS, ids=[" ".join(as_argv(c, f)) for c, f in REQUESTS])
def test_same_as_cli(cli, cmd, flags):
    rc, out, err = cli(*as_argv(cmd, flags), "--format", "json")
    func = FUNCS[cmd]
    if rc == 0:
        got = func(**as_call(flags))
        assert got.to_dict() == json.loads(out)
        assert got.status == 0
    else:
        assert rc == 2, err
        with pytest.raises(ulysim.UsageError) as e:
            func(**as_call(flags))
        assert e.value.message == err.strip()
        assert str(e.value) == err.strip()
        assert e.value.status == 2


def test_draws_cover_both_outcomes(cli):
    """The 60 requests are not all refused, nor all accepted, and span the commands and strategies pinned."""
    outcomes = [cli(*as_argv(c, f), "--format", "json")[0] for c, f in REQUESTS]
    assert outcomes.count(0) >= 35
    assert outcomes.count(2) >= 2
    assert {c for c, _ in REQUESTS} == set(FUNCS)
    assert len({f for _, fl in REQUESTS for f, _ in fl}) >= 25


ERRORS = [
    (dict(gpus=0), "--gpus", "0"),
    (dict(gpus="x"), "--gpus", "x"),
    (dict(model="nosuch"), "--model", "nosuch"),
    (dict(cluster="nowhere"), "--cluster", "nowhere"),
    (dict(strategy="foo"), "--strategy", "foo"),
    (dict(dtype="fp7"), "--dtype", "fp7"),
    (dict(nic_bw="3"), "--nic-bw", "3"),
    (dict(gpus=12, tp=8), "--tp", "8"),
    (dict(seq="1,000,000"), "--seq", "1,000,000"),
    (dict(gpus=[8, 16]), "--gpus", "8,16"),
]


@pytest.mark.parametrize("kwargs,flag,value", ERRORS, ids=[repr(k) for k, _, _ in ERRORS])
def test_errors_carry_the_cli_line_and_value(cli, kwargs, flag, value):
    argv = ["plan"]
    for k, v in kwargs.items():
        argv += ["--" + k.replace("_", "-"), typed(v)]
    rc, _, err = cli(*argv)
    assert rc == 2
    with pytest.raises(ulysim.UsageError) as e:
        ulysim.plan(**kwargs)
    assert e.value.message == err.strip()
    assert e.value.flag == flag
    assert e.value.value == value


def test_unknown_keyword(cli):
    rc, _, err = cli("plan", "--foo-bar", "3")
    assert rc == 2
    with pytest.raises(ulysim.UnknownOptionError) as e:
        ulysim.plan(foo_bar=3)
    assert e.value.message == err.strip()
    assert e.value.value == "--foo-bar"
    assert isinstance(e.value, ulysim.Error) and isinstance(e.value, ValueError)


def test_require_fit_raises_nofit(cli):
    argv = ["plan", "--model", "llama3-405b", "--gpus", "8", "--seq", "1M", "--require-fit"]
    rc, _, err = cli(*argv)
    assert rc == 3
    with pytest.raises(ulysim.NoFitError) as e:
        ulysim.plan(model="llama3-405b", gpus=8, seq="1M", require_fit=True)
    assert e.value.message == err.strip().splitlines()[-1]


def test_presets_and_version(cli, cli_json):
    assert ulysim.presets() == cli_json("presets")
    rc, out, _ = cli("--version")
    assert rc == 0 and ulysim.__version__ in out.split()[1]
