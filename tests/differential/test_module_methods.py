"""Differential tests for nn.Module's tree methods (rewrites/tables/module_methods.toml):
each case builds a small container inside forward, calls the method through the
converted code, and returns what can be compared across frameworks (counts, child and
parameter names, parameter shapes, the training flag).

Every converted entry has cases; entries with arguments have three call forms.
"""
from __future__ import annotations

import pytest

from .harness import Case, Suite, coverage_gaps

CASES: list[Case] = []
PREFIX = "torch.nn.Module."
NET = "m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))\n"
SHAPES = "return [tuple(p.shape) for p in {}]"
NAMES = "return [(n, tuple(p.shape)) for n, p in {}]"


def case(name: str, body: str, form: str = "") -> None:
    CASES.append(Case(PREFIX + name, NET + body, (), form))


for form, call in {"positional": "m.parameters(True)", "keyword": "m.parameters(recurse=False)",
                   "defaults": "m.parameters()"}.items():
    case("parameters", SHAPES.format(call), form)
for form, call in {"positional": "m.named_parameters('net', True)",
                   "keyword": "m.named_parameters(prefix='net', recurse=False, remove_duplicate=True)",
                   "defaults": "m.named_parameters()"}.items():
    case("named_parameters", NAMES.format(call), form)
for form, call in {"positional": "m.train(False)", "keyword": "m.train(mode=False)", "defaults": "m.train()"}.items():
    case("train", f"m.eval()\n{call}\nreturn m.training", form)
case("eval", "m.train()\nm.eval()\nreturn m.training")
case("modules", "return len(list(m.modules()))")
case("named_modules", "return [n for n, _ in m.named_modules()]")
case("children", "return len(list(m.children()))")
case("named_children", "return [n for n, _ in m.named_children()]")
for adder in ("add_module", "register_module"):
    for form, call in {"positional": f"c.{adder}('act', nn.ReLU())",
                       "keyword": f"c.{adder}(name='act', module=nn.ReLU())",
                       "mixed": f"c.{adder}('act', module=nn.ReLU())"}.items():
        case(adder, f"c = nn.Module()\n{call}\nreturn [n for n, _ in c.named_children()]", form)
    case(adder, f"c = nn.Module()\nfor pair in [('a', nn.ReLU()), ('b', nn.Tanh())]:\n    c.{adder}(*pair)\n"
         "return [n for n, _ in c.named_children()]", "starred")

for form, call in {"positional": "c.register_parameter('w', nn.Parameter(torch.ones(2, 3)))",
                   "keyword": "c.register_parameter(name='w', param=nn.Parameter(torch.ones(2, 3)))",
                   "none": "c.register_parameter('w', None)"}.items():
    case("register_parameter", f"c = nn.Module()\n{call}\n"
         "return [(n, tuple(p.shape)) for n, p in c.named_parameters()], c.w is None", form)

# Methods with nothing to do on a Cell: the statement goes; the layer works as in torch
# (flatten_parameters: cuDNN's weight layout; reset_parameters while a layer is built:
# MindSpore drew torch's distributions already, tests/differential/test_torch_quirks.py).
RNN = "m = nn.{}(2, 3, batch_first=True)\n"
for kind in ("LSTM", "GRU", "RNN"):
    CASES.append(Case("torch.nn.RNNBase.flatten_parameters", RNN.format(kind) + "m.flatten_parameters()\n"
                      "return [(n, tuple(p.shape)) for n, p in m.named_parameters()]", (), kind.lower()))
CASES.append(Case("torch.nn.RNNBase.flatten_parameters", RNN.format("LSTM") + "if True:\n    m.flatten_parameters()\n"
                  "return m.flatten_parameters()", (), "value"))
BOUND = "return tuple(c.weight.shape), bool(torch.max(torch.abs(c.weight)) <= {})"
for form, (base, args, call, bound) in {
        "super": ("nn.Conv2d", "4, 8, 3", "super().reset_parameters()", "36 ** -0.5"),
        "self": ("nn.Linear", "20, 30", "self.reset_parameters()", "20 ** -0.5"),
        "attribute": ("nn.Module", "", "self.fc = nn.Linear(50, 2)\n        self.fc.reset_parameters()", "50 ** -0.5")}.items():
    layer = "c.fc" if form == "attribute" else "c"
    CASES.append(Case("torch.nn.Linear.reset_parameters",
                      f"class C({base}):\n    def __init__(self):\n        super().__init__({args})\n        {call}\n"
                      f"c = C()\n" + BOUND.format(bound).replace("c.weight", f"{layer}.weight"), (), form))
# Embedding's reset_parameters draws N(0, 1) and zeroes the padding row (MindSpore's layer
# draws N(0, 0.01)): a run-time helper draws torch's (loralib calls it through the class)
TABLE = ("w = {0}\nreturn tuple(w.shape), bool(torch.all(w[1] == 0)), "
         "bool(0.9 < float(torch.std(w)) < 1.1), bool(abs(float(torch.mean(w))) < 0.1)")
for form, (base, call, layer) in {
        "embedding-class": ("nn.Embedding", "nn.Embedding.reset_parameters(self)", "c.weight"),
        "embedding-super": ("nn.Embedding", "super().reset_parameters()", "c.weight"),
        "embedding-attribute": ("nn.Module", "self.e = nn.Embedding(400, 16, padding_idx=1)\n        "
                                "self.e.reset_parameters()\n    def table(self):\n        return self.e.weight",
                                "c.table()")}.items():
    init = "400, 16, padding_idx=1" if base == "nn.Embedding" else ""
    CASES.append(Case("torch.nn.Linear.reset_parameters",
                      f"class C({base}):\n    def __init__(self):\n        super().__init__({init})\n        {call}\n"
                      f"c = C()\n" + TABLE.format(layer), (), form))

# a Sequential subclass that adds its children and stops early (MONAI's Convolution with
# conv_only=True): what it added by the return runs
EARLY = ("class S(nn.Sequential):\n    def __init__(self, only):\n        super().__init__()\n"
         "        self.add_module('lin', nn.Linear(2, 3))\n        if only: return\n"
         "        self.add_module('act', nn.Tanh())\n"
         "s, t = S(True), S(False)\nreturn len(s), len(t), tuple(s(torch.ones(4, 2)).shape), bool(torch.max(torch.abs(t(torch.ones(4, 2)))) <= 1)")
CASES.append(Case("torch.nn.Module.add_module", EARLY, (), "sequential-early-return"))

# a registered buffer assigned again (timm's ConViT recomputes its indices in forward):
# torch updates the buffer; the converted code registers it again, persistence kept
BUFFER = ("class B(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
          "        self.register_buffer('rel', torch.zeros(1, 2){})\n"
          "    def forward(self, x):\n        if self.rel.shape[1] != x.shape[1]:\n"
          "            self.rel = torch.ones(1, x.shape[1])\n        return x + self.rel\n"
          "b = B()\nreturn b(torch.ones(2, 3)), sorted(n for n, _ in b.named_buffers()), sorted(b.state_dict())")
for form, persistent in {"non-persistent": ", persistent=False", "persistent": "", "positional": ", None, False"}.items():
    if form == "positional":
        body = BUFFER.replace("torch.zeros(1, 2){}", "torch.zeros(1, 2), False")
    else:
        body = BUFFER.format(persistent)
    CASES.append(Case("torch.nn.Module.register_buffer", body, (), form))

# Methods the Cell has under the same name: the call stays (keywords renamed). A net with
# a persistent and a non-persistent buffer; weights are compared through another net
# loaded from the first (both frameworks draw other initial values).
STATE = ("class S(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.fc = nn.Linear(2, 3)\n        self.register_buffer('scale', torch.full((3,), 2.0))\n"
         "        self.register_buffer('tmp', torch.zeros(1), persistent=False)\n"
         "    def forward(self, x):\n        return self.fc(x) * self.scale\n"
         "m, n = S(), S()\nx = torch.ones(4, 2)\n")
KEYS = "return sorted((k, tuple(v.shape)) for k, v in {}.items())"
for form, call in {"call": "m.state_dict()", "prefix": "m.state_dict(prefix='net.')",
                   "keep-vars": "m.state_dict(keep_vars=True)", "nested": "nn.Sequential(m, n).state_dict()"}.items():
    case("state_dict", STATE + KEYS.format(call), form)
LOADED = "\nreturn sorted(r.missing_keys), sorted(r.unexpected_keys), n(x) - m(x)"
for form, call in {"positional": "r = n.load_state_dict(m.state_dict(), True, False)",
                   "keyword": "r = n.load_state_dict(state_dict=m.state_dict(), strict=True, assign=False)",
                   "defaults": "r = n.load_state_dict(m.state_dict())",
                   "not-strict": "sd = m.state_dict()\nsd.pop('scale')\nr = n.load_state_dict(sd, strict=False)"}.items():
    case("load_state_dict", STATE + call + LOADED, form)
NAMED = "return [(k, tuple(b.shape)) for k, b in {}]"
for form, call in {"positional": "nn.Sequential(m).named_buffers('net', True, True)",
                   "keyword": "nn.Sequential(m).named_buffers(prefix='net', recurse=False, remove_duplicate=True)",
                   "defaults": "nn.Sequential(m, m).named_buffers()"}.items():
    case("named_buffers", STATE + NAMED.format(call), form)
for form, call in {"positional": "nn.Sequential(m).buffers(True)", "keyword": "nn.Sequential(m).buffers(recurse=False)",
                   "defaults": "m.buffers()"}.items():
    case("buffers", STATE + f"return [tuple(b.shape) for b in {call}]", form)
for form, call in {"positional": "c.register_buffer('w', torch.ones(2), False)",
                   "keyword": "c.register_buffer(name='w', tensor=torch.ones(2), persistent=True)",
                   "defaults": "c.register_buffer('w', torch.ones(2))"}.items():
    case("register_buffer", f"c = nn.Module()\n{call}\nreturn c.w, sorted(c.state_dict()), [k for k, _ in c.named_buffers()]",
         form)
for form, call in {"positional": "m.get_buffer('scale')", "keyword": "m.get_buffer(target='scale')",
                   "nested": "nn.Sequential(m).get_buffer('0.scale')"}.items():
    case("get_buffer", STATE + f"return {call}", form)
APPLY = "seen = []\n{}\nreturn seen"
for form, call in {"positional": "m.apply(lambda c: seen.append(isinstance(c, nn.Linear)))",
                   "keyword": "m.apply(fn=lambda c: seen.append(isinstance(c, nn.Linear)))",
                   "nested": "nn.Sequential(m, nn.ReLU()).apply(lambda c: seen.append(isinstance(c, nn.ReLU)))",
                   "function": "def count(c):\n    seen.append(len(list(c.children())))\nm.apply(count)"}.items():
    case("apply", STATE + APPLY.format(call), form)
HOOKED = "\ny = m(x)\nh.remove()\nreturn y - 2 * m(x)"
for form, call in {"positional": "h = m.register_forward_hook(lambda mod, inp, out: out * 2)",
                   "keyword": "h = m.register_forward_hook(hook=lambda mod, inp, out: out * 2, prepend=False)",
                   "with-kwargs": "h = m.register_forward_hook(lambda mod, args, kwargs, out: out * 2, with_kwargs=True)"}.items():
    case("register_forward_hook", STATE + call + HOOKED, form)
PRE = "\ny = m(x)\nh.remove()\nreturn y - m(x + 1)"
for form, call in {"positional": "h = m.register_forward_pre_hook(lambda mod, inp: (inp[0] + 1,))",
                   "keyword": "h = m.register_forward_pre_hook(hook=lambda mod, inp: (inp[0] + 1,), prepend=True)",
                   "with-kwargs": "h = m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] + 1,), kwargs), "
                                  "with_kwargs=True)"}.items():
    case("register_forward_pre_hook", STATE + call + PRE, form)

# State-dict hooks, torch's public ones (the Cell's, same names) and private ones (composed)
for form, call in {"positional": "h = m.register_state_dict_pre_hook(lambda mod, prefix, keep: seen.append(prefix))",
                   "keyword": "h = m.register_state_dict_pre_hook(hook=lambda mod, prefix, keep: seen.append(prefix))",
                   "nested": "h = nn.Sequential(m).register_state_dict_pre_hook(lambda mod, p, keep: seen.append(len(p)))"
                   }.items():
    case("register_state_dict_pre_hook",
         STATE + "seen = []\n" + call + "\nnn.Sequential(m).state_dict()\nh.remove()\nm.state_dict()\nreturn seen", form)
DROP = "def drop(mod, sd, prefix, meta):\n    sd.pop(prefix + 'scale')\n"
for form, call in {"positional": "m.register_state_dict_post_hook(drop)",
                   "keyword": "m.register_state_dict_post_hook(hook=drop)",
                   "removed": "m.register_state_dict_post_hook(drop).remove()"}.items():
    case("register_state_dict_post_hook", STATE + DROP + call + "\n" + KEYS.format("nn.Sequential(m).state_dict()"), form)
OLD_NAMES = ("def back(mod, sd, prefix, meta, strict, missing, unexpected, errors):\n"
             "    for k in [k for k in sd if k.startswith('old.')]:\n        sd[k[4:]] = sd.pop(k)\n"
             "sd = {'old.' + k: v for k, v in m.state_dict().items()}\n")
for form, call in {"positional": "n.register_load_state_dict_pre_hook(back)",
                   "keyword": "n.register_load_state_dict_pre_hook(hook=back)",
                   "function": "n.register_load_state_dict_pre_hook(lambda *args: back(*args))"}.items():
    case("register_load_state_dict_pre_hook", STATE + OLD_NAMES + call + "\nr = n.load_state_dict(sd)" + LOADED, form)
AFTER = ("seen = []\nsd = m.state_dict()\nsd.pop('scale')\n{}\n"
         "n.load_state_dict(sd, strict=False)\nreturn seen")
for form, call in {"positional": "n.register_load_state_dict_post_hook(lambda mod, k: seen.append(sorted(k.missing_keys)))",
                   "keyword": "n.register_load_state_dict_post_hook(hook=lambda mod, k: seen.append(len(k.unexpected_keys)))",
                   "removed": "n.register_load_state_dict_post_hook(lambda mod, k: seen.append(1)).remove()"}.items():
    case("register_load_state_dict_post_hook", STATE + AFTER.format(call), form)
RENAME = "lambda mod, sd, prefix, meta: {k.replace('fc.', 'proj.'): v for k, v in sd.items()}"
for form, call in {"positional": f"m._register_state_dict_hook({RENAME})",
                   "keyword": f"m._register_state_dict_hook(hook={RENAME})",
                   "in-place": "m._register_state_dict_hook(lambda mod, sd, prefix, meta: [sd.pop(prefix + 'scale')] and None)"}.items():
    case("_register_state_dict_hook", STATE + call + "\n" + KEYS.format("m.state_dict()"), form)
PRIVATE_BACK = ("def back(sd, prefix, meta, strict, missing, unexpected, errors):\n"
                "    for k in [k for k in sd if k.startswith('old.')]:\n        sd[k[4:]] = sd.pop(k)\n"
                "sd = {'old.' + k: v for k, v in m.state_dict().items()}\n")
for form, call in {"positional": "n._register_load_state_dict_pre_hook(back, False)",
                   "keyword": "n._register_load_state_dict_pre_hook(hook=back)",
                   "with-module": "n._register_load_state_dict_pre_hook(lambda mod, *rest: back(*rest), with_module=True)"}.items():
    case("_register_load_state_dict_pre_hook", STATE + PRIVATE_BACK + call + "\nr = n.load_state_dict(sd)" + LOADED, form)
# Full backward hooks: registered and removed without touching the forward pass here;
# their gradients are compared in test_unseen_classes.py (a backward pass on both sides)
UNTOUCHED = "\ny = m(x)\nh.remove()\nreturn y - m(x)"
for name in ("register_full_backward_hook", "register_full_backward_pre_hook"):
    hook = "lambda mod, gi, go: None" if name == "register_full_backward_hook" else "lambda mod, go: None"
    for form, call in {"positional": f"h = m.{name}({hook})", "keyword": f"h = m.{name}(hook={hook}, prepend=False)",
                       "child": f"h = m.fc.{name}({hook})"}.items():
        case(name, STATE + call + UNTOUCHED, form)

# Methods the Cell lacks, composed beside the code
FLAGS = "\nreturn [p.requires_grad for p in m.parameters()], r is m"
for form, call in {"positional": "r = m.requires_grad_(False)", "keyword": "r = m.requires_grad_(requires_grad=False)",
                   "defaults": "m.requires_grad_(False)\nr = m.requires_grad_()",
                   }.items():
    case("requires_grad_", call + FLAGS, form)
# a frozen part, in the constructor (a backbone frozen for fine-tuning)
case("requires_grad_", "class F(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.body = nn.Linear(2, 3)\n        self.head = nn.Linear(3, 1)\n        self.body.requires_grad_(False)\n"
     "f = F()\nreturn [(n, p.requires_grad) for n, p in f.named_parameters()]", "attribute")
SUB = "class T(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.body = nn.Sequential(nn.Linear(2, 3), nn.Tanh())\n" \
      "t = T()\n"
for form, call in {"positional": "t.get_submodule('body.0')", "keyword": "t.get_submodule(target='body')",
                   "self": "t.get_submodule('')", "index": "m.get_submodule('2')"}.items():
    case("get_submodule", SUB + f"s = {call}\nreturn isinstance(s, nn.Linear), isinstance(s, nn.Sequential), "
         "[tuple(p.shape) for p in s.parameters()]", form)
for form, call in {"positional": "t.get_parameter('body.0.weight')", "keyword": "t.get_parameter(target='body.0.bias')",
                   "index": "m.get_parameter('2.weight')"}.items():
    case("get_parameter", SUB + f"p = {call}\nreturn tuple(p.shape), p.requires_grad", form)

SUITE = Suite(CASES)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_module_method(case):
    SUITE.check(case)


def test_every_module_method_entry_has_cases():
    gaps = coverage_gaps(["module_methods.toml"], SUITE.cases)
    assert not any(gaps.values()), gaps
