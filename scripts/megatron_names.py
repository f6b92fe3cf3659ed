#!/usr/bin/env python3
"""megatron_names.py: every command-line argument of a Megatron-LM checkout,
read from its source without running it (its parser imports torch), as
"NAME<TAB>VALUES<TAB>GROUP" lines: VALUES is 0 (a switch), 1 (one value),
? (an optional value), + or * (several values, argparse's nargs); GROUP is the
_add_*_args function of megatron/training/arguments.py, or the configuration
dataclass an ArgumentGroupFactory builds a group from.

What it reads, as megatron/training/argument_utils.py builds it:
  - parser.add_argument / group.add_argument calls with literal names;
  - ArgumentGroupFactory(Config, exclude=[...]): one argument per dataclass
    field (the class and its bases, found by name in the checkout), named
    --field-name; a bool field defaulting to False is a store_true switch,
    any other bool a store_false one named --no-field-name and
    --disable-field-name; list[...] takes nargs '+'; a field's
    metadata["argparse_meta"] overrides arg_names, nargs and action.

Usage: scripts/megatron_names.py MEGATRON_LM_DIR COMMIT > sim/driver/megatron_names.c
writes the table as C (sim/driver/megatron_names.c holds it for the commit
it names); with no COMMIT, the lines as TSV.
"""
import ast
import os
import sys

root = sys.argv[1]
args_py = os.path.join(root, "megatron/training/arguments.py")
classes = {}


def index_classes():
    for d, _, files in os.walk(os.path.join(root, "megatron")):
        for f in files:
            if not f.endswith(".py"):
                continue
            p = os.path.join(d, f)
            try:
                tree = ast.parse(open(p, encoding="utf-8").read())
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    classes.setdefault(node.name, node)


def values_of(action, nargs):
    if action in ("store_true", "store_false", "store_const", "count", "help", "version"):
        return "0"
    if nargs is None:
        return "1"
    return str(nargs)


def const(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


def ann_text(a):
    return ast.unparse(a) if a is not None else ""


def dataclass_args(cls_name, exclude, out, group, seen=None):
    seen = seen or set()
    node = classes.get(cls_name)
    if node is None or cls_name in seen:
        return
    seen.add(cls_name)
    for b in node.bases:  # the bases' fields come first, as dataclasses order them
        if isinstance(b, ast.Name):
            dataclass_args(b.id, exclude, out, group, seen)
    for st in node.body:
        if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)):
            continue
        name = st.target.id
        if name in exclude or "ClassVar" in ann_text(st.annotation):
            continue
        default = st.value
        meta = {}
        if isinstance(default, ast.Call) and getattr(default.func, "id", "") == "field":
            kws = {k.arg: k.value for k in default.keywords}
            if "init" in kws and const(kws["init"]) is False:
                continue
            default = kws.get("default")
            md = kws.get("metadata")
            if isinstance(md, ast.Dict):
                for k, v in zip(md.keys, md.values):
                    if const(k) == "argparse_meta" and isinstance(v, ast.Dict):
                        for k2, v2 in zip(v.keys, v.values):
                            meta[const(k2)] = v2
        t = ann_text(st.annotation).replace(" ", "")
        dval = const(default) if default is not None else None
        names = ["--" + name.replace("_", "-")]
        action, nargs = None, None
        if t in ("bool", "Optional[bool]", "bool|None", "None|bool"):
            if dval is False:
                action = "store_true"
            else:
                action = "store_false"
                names = ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
        elif t.startswith("list[") or t.startswith("Optional[list[") or t.startswith("List["):
            nargs = "+"
        if "arg_names" in meta:
            names = const(meta["arg_names"]) or names
        if "nargs" in meta:
            nargs = const(meta["nargs"])
        if "action" in meta:
            action = const(meta["action"])
        for n in names:
            out.append((n, values_of(action, nargs), group))


def main():
    index_classes()
    tree = ast.parse(open(args_py, encoding="utf-8").read())
    out = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        group = fn.name
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "add_argument":
                names = [const(a) for a in node.args if isinstance(const(a), str) and const(a).startswith("-")]
                kws = {k.arg: const(k.value) for k in node.keywords}
                for n in names:
                    out.append((n, values_of(kws.get("action"), kws.get("nargs")), group))
            elif isinstance(f, ast.Name) and f.id == "ArgumentGroupFactory" and node.args:
                cls = node.args[0].id if isinstance(node.args[0], ast.Name) else None
                kws = {k.arg: const(k.value) for k in node.keywords}
                if cls:
                    dataclass_args(cls, set(kws.get("exclude") or []), out, cls)
    seen, rows = set(), []
    for n, v, g in out:
        if n not in seen:
            seen.add(n)
            rows.append((n, v, g))
    if len(sys.argv) < 3:
        for n, v, g in rows:
            print(f"{n}\t{v}\t{g}")
        return
    print("/* megatron_names.c: every command-line argument of Megatron-LM (NVIDIA/Megatron-LM")
    print(f" * commit {sys.argv[2]}, megatron/training/arguments.py and the")
    print(" * configuration dataclasses it builds argument groups from), with how many")
    print(" * values it takes and its group. GENERATED by scripts/megatron_names.py: do not")
    print(" * edit; args_megatron.c says which are priced, ignored or refused. */")
    print('#include "args_megatron.h"')
    print()
    print("const sim_mlm_name sim_mlm_names[] = {")
    for n, v, g in rows:
        print(f'    {{"{n}", \'{v}\', "{g}"}},')
    print("};")
    print("const int sim_mlm_names_count = (int)(sizeof sim_mlm_names / sizeof sim_mlm_names[0]);")


main()
