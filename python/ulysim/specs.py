"""ulysim.specs: models and clusters from Python dicts, in the project's
model and cluster file formats (sim/presets/README.md). A Model or Cluster
passed as model= or cluster= is written once to a temporary JSON file that
the CLI reads as it reads any --model FILE.json; its checks and messages are
the CLI's."""
import json
import os
import tempfile
import weakref

from . import _cli

__all__ = ["Model", "Cluster"]


class _Spec(dict):
    kind = None  # "model" or "cluster"

    def __init__(self, spec=None, **fields):
        super().__init__(spec or {})
        self.update(fields)
        self._file = None

    @classmethod
    def from_preset(cls, name, **overrides):
        """A preset's file (`ulysim presets show NAME`), fields overridden."""
        _, text = _cli.run(["presets", "show", name])
        spec = cls(json.loads(text))
        if spec.get("gpu") is not None and cls.kind == "model":
            raise ValueError("%s is a cluster preset, not a model" % name)
        spec.update(overrides)
        return spec

    @classmethod
    def from_json(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    def _cli_value(self):
        """The path of this spec's JSON file (written when first asked for,
        again when the dict changed; removed with the object)."""
        text = json.dumps(dict(self), indent=1)
        if self._file is None or self._file[1] != text:
            fd, path = tempfile.mkstemp(prefix="ulysim-%s-" % self.kind, suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            if self._file is not None:
                self._finalizer()
            self._finalizer = weakref.finalize(self, _remove, path)
            self._file = (path, text)
        return self._file[0]

    def __repr__(self):
        return "ulysim.%s(%s)" % (type(self).__name__, dict.__repr__(self))


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


class Model(_Spec):
    """A model in the model-file format: layers, hidden, heads, kv_heads,
    head_dim, ffn_hidden, vocab, swiglu, tied_embeddings, dropout (name,
    description, source optional). Model(dict) or Model(**fields)."""

    kind = "model"

    @classmethod
    def from_hf(cls, config, name=None):
        """A decoder's Hugging Face config, dense or a mixture of experts (a
        dict, a config.json path, or a directory holding one), read by the
        library's own reader (the CLI's `--model path/config.json`,
        formats/preset_hf.c): the model it makes, in the model-file format.
        A key the reader cannot price (a Llama 4 interleave_moe_layer_step,
        ...) raises ulysim.UsageError naming it, as the CLI refuses it."""
        with tempfile.TemporaryDirectory(prefix="ulysim-hf-") as tmp:
            if isinstance(config, dict):
                label = name or config.get("_name_or_path") or config.get("model_type") or "hf-model"
                d = os.path.join(tmp, str(label).replace("/", "-").replace(os.sep, "-") or "hf-model")
                os.mkdir(d)
                with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
                    json.dump(config, f)
                path = d
            else:
                path = os.path.abspath(os.fspath(config))
            _, text = _cli.run(["plan", "--model", path, "--gpus", "1", "--seq", "1K", "--strategy", "ulysses",
                                "--format", "json"])
        m = json.loads(text)["config"]["model"]
        m.pop("params", None)
        # the plan's JSON nests a mixture of experts' and latent attention's
        # fields; the model-file format holds them flat
        m.pop("active_params", None)
        moe = m.pop("moe", None) or {}
        moe.pop("moe_layers", None)
        m.update(moe)
        m.update(m.pop("mla", None) or {})
        sw = m.pop("sliding_window", None)
        if sw:
            m["attn_window"], m["window_layers"] = sw["tokens"], sw["layers"]
        m["source"] = "Hugging Face config %s" % (path if not isinstance(config, dict) else "(a dict)")
        if name:
            m["name"] = name
        return cls(m)


class Cluster(_Spec):
    """A cluster in the cluster-file format (see `ulysim presets show
    dgx-h100`); Cluster.from_preset("dgx-h100", nodes=16) overrides fields."""

    kind = "cluster"
