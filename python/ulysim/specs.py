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


# Hugging Face config.json keys of a dense decoder, and the model-file field
# each one is (the file's own fields: sim/presets/README.md)
_HF_KEYS = {
    "num_hidden_layers": "layers", "n_layer": "layers",
    "hidden_size": "hidden", "n_embd": "hidden",
    "num_attention_heads": "heads", "n_head": "heads",
    "num_key_value_heads": "kv_heads",
    "head_dim": "head_dim",
    "intermediate_size": "ffn_hidden", "n_inner": "ffn_hidden",
    "vocab_size": "vocab",
    "tie_word_embeddings": "tied_embeddings",
}
# gated activations (SwiGLU / GeGLU MLPs: three weight matrices)
_GATED_ACTS = {"silu", "swiglu", "swish"}


class Model(_Spec):
    """A model in the model-file format: layers, hidden, heads, kv_heads,
    head_dim, ffn_hidden, vocab, swiglu, tied_embeddings, dropout (name,
    description, source optional). Model(dict) or Model(**fields)."""

    kind = "model"

    @classmethod
    def from_hf(cls, config, name=None):
        """A dense decoder's Hugging Face config (a dict, a config.json path,
        or a directory holding one) mapped key by key to the model-file
        format, in this file (the CLI's --model reads the project's format).
        Keys it does not state take the file format's meaning of a dense
        transformer: kv_heads = heads, head_dim = hidden / heads, ffn_hidden =
        4 hidden, no dropout masks. Mixture-of-experts configs are refused."""
        source = "Hugging Face config"
        if not isinstance(config, dict):
            path = os.fspath(config)
            if os.path.isdir(path):
                path = os.path.join(path, "config.json")
            with open(path, encoding="utf-8") as f:
                config = json.load(f)
            source = "Hugging Face config %s" % path
        if any(k in config for k in ("num_local_experts", "num_experts", "n_routed_experts")):
            raise ValueError("Model.from_hf: a mixture-of-experts config (valid: a dense decoder's config.json)")
        m = {}
        for k, field in _HF_KEYS.items():
            if k in config and config[k] is not None and field not in m:
                m[field] = config[k]
        missing = [f for f in ("layers", "hidden", "heads", "vocab") if f not in m]
        if missing:
            raise ValueError("Model.from_hf: the config states no %s (valid: a config.json with num_hidden_layers, "
                             "hidden_size, num_attention_heads, vocab_size)" % ", ".join(missing))
        m.setdefault("kv_heads", m["heads"])
        m.setdefault("head_dim", m["hidden"] // m["heads"])
        m.setdefault("ffn_hidden", 4 * m["hidden"])
        act = str(config.get("hidden_act", config.get("activation_function", ""))).lower()
        m["swiglu"] = act in _GATED_ACTS
        m.setdefault("tied_embeddings", False)
        m["dropout"] = bool(config.get("attention_dropout") or config.get("hidden_dropout")
                            or config.get("resid_pdrop"))
        label = name or config.get("_name_or_path") or config.get("model_type") or "hf-model"
        m = {"name": str(label).replace("/", "-"), "source": source, **m}
        return cls(m)


class Cluster(_Spec):
    """A cluster in the cluster-file format (see `ulysim presets show
    dgx-h100`); Cluster.from_preset("dgx-h100", nodes=16) overrides fields."""

    kind = "cluster"
