"""Foreign checkpoint layouts mapped onto our :class:`~tsm_apps.models.recognizer.Recognizer` keys.

Our keys mirror torchvision: ``backbone.conv1.weight``, ``backbone.bn1.*``,
``backbone.layer1.0.conv1.net.weight`` (shifted conv), ``backbone.layer1.0.downsample.0/1``,
``backbone.features.N.conv.0.0.weight`` (MobileNetV2), classifier ``fc.*``.

Layouts recognised by :func:`detect_layout`:

* ``"tsm_apps"``: ours (a state dict saved from a Recognizer).
* ``"official"``: mit-han-lab/temporal-shift-module: ``[module.]base_model.*``, ``new_fc.*``
  (``base_model.fc``/``base_model.classifier`` when trained with dropout 0); its MobileNetV2 keeps
  Conv/BN directly in ``features.N.conv.0..7`` (mapped to torchvision's nesting here).
* ``"mmaction2"``: ``backbone.conv1.conv/bn``, ``backbone.layer1.0.conv1.conv.net.weight``,
  ``downsample.conv/bn``, ``cls_head.fc_cls.*`` (ResNet TSM without non-local blocks).
* ``"torchvision"``: an ImageNet ResNet state dict of torchvision (``conv1.weight``, ``bn1.*``,
  ``layer1.0.conv1.weight``, ``layer1.0.downsample.0/1.*``, ``fc.*``; no prefix), also wrapped
  in ``state_dict``/``model`` (how FGFA, MEGA, SELSA and the TSM paper's R-FCN start).
* ``"mmpretrain"``: mmpretrain/mmcls ResNet: the torchvision keys under ``backbone.``, the
  classifier ``head.fc.*`` (or no classifier).

The two ImageNet layouts hold plain 2D convolutions: :func:`align_to` moves their weights onto a
shifted model's keys (``conv1.weight`` -> ``conv1.net.weight``).

:func:`infer_structure` reads the architecture from the mapped keys; :func:`mmaction2_meta_config`
the config text that mmengine stores in ``meta['cfg']`` (the official file name is read by
:mod:`tsm_apps.checkpoint.identity`).
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from torch import Tensor

from ..models.trunk import RESNET_SPECS

LAYOUTS = ("tsm_apps", "official", "mmaction2", "torchvision", "mmpretrain")
IMAGENET_LAYOUTS = ("torchvision", "mmpretrain")  # no shift wrappers in their keys
_IGNORED_PREFIXES = ("data_preprocessor.",)  # mmaction2 normalisation buffers, not weights
# official MobileNetV2 Sequential index -> torchvision Conv2dNormActivation nesting
_MBV2_EXPAND = {0: "0.0", 1: "0.1", 3: "1.0", 4: "1.1", 6: "2", 7: "3"}
_MBV2_NO_EXPAND = {0: "0.0", 1: "0.1", 3: "1", 4: "2"}


def _strip_module(sd: Mapping[str, Tensor]) -> dict:
    """Remove the DataParallel/DDP ``module.`` prefix when every key has it."""
    if sd and all(k.startswith("module.") for k in sd):
        return {k[len("module.") :]: v for k, v in sd.items()}
    return dict(sd)


def detect_layout(state_dict: Mapping[str, Tensor]) -> str:
    """Name the key layout of a state dict (see module docstring); ValueError if none fits."""
    keys = list(_strip_module(state_dict))
    if any(k.startswith("base_model.") for k in keys):
        return "official"
    mm_conv = re.compile(r"backbone\.(conv1|layer\d\.\d+\.conv1)\.conv\.")
    if any(k.startswith("cls_head.") or mm_conv.match(k) for k in keys):
        return "mmaction2"
    if any(k.startswith("backbone.") for k in keys):
        if any(k.startswith("fc.") for k in keys):
            return "tsm_apps"
        if "backbone.conv1.weight" in keys and not any(
            k.startswith("backbone.features.") for k in keys
        ):
            return "mmpretrain"
    if "conv1.weight" in keys and any(k.startswith("layer1.") for k in keys):
        return "torchvision"
    sample = ", ".join(keys[:5])
    raise ValueError(
        f"unrecognised checkpoint layout ({len(keys)} keys, e.g. {sample}); expected "
        "our Recognizer keys, the official TSM repo's 'base_model.*', mmaction2's "
        "'backbone.*'/'cls_head.*', torchvision's 'conv1.*'/'layer1.*' or "
        "mmpretrain's 'backbone.*'/'head.fc.*' keys"
    )


def to_our_keys(state_dict: Mapping[str, Tensor], layout: str | None = None) -> dict:
    """Map a state dict in any known layout to our keys (tensors are shared, not copied)."""
    sd = _strip_module(state_dict)
    layout = layout or detect_layout(sd)
    if layout == "official":
        return _from_official(sd)
    if layout == "mmaction2":
        return _from_mmaction2(sd)
    if layout == "tsm_apps":
        return sd
    if layout == "torchvision":
        return {k if k.startswith("fc.") else "backbone." + k: v for k, v in sd.items()}
    if layout == "mmpretrain":
        return {
            ("fc." + k[len("head.fc.") :] if k.startswith("head.fc.") else k): v
            for k, v in sd.items()
            if k.startswith(("backbone.", "head.fc."))
        }
    raise ValueError(f"unknown layout {layout!r}; expected one of {LAYOUTS}")


def _canonical(key: str) -> str:
    """A key without the shift wrappers (``.net``, ``.block``) of our modules."""
    return re.sub(r"\.(net|block)(?=\.)", "", key)


def align_to(sd: Mapping[str, Tensor], target_keys: Sequence[str]) -> dict:
    """``sd`` with each key that ``target_keys`` lacks renamed to the target key that equals
    it up to the shift wrappers (``layer1.0.conv1.weight`` -> ``layer1.0.conv1.net.weight``);
    keys with no such target stay as they are (a later check reports them)."""
    target = set(target_keys)
    by_canon: dict = {}
    for k in target:
        by_canon.setdefault(_canonical(k), []).append(k)
    out = {}
    for k, v in sd.items():
        cands = by_canon.get(_canonical(k), [])
        out[cands[0] if k not in target and len(cands) == 1 else k] = v
    return out


def _from_official(sd: dict) -> dict:
    out = {}
    for k, v in sd.items():
        for old, new in (
            ("new_fc.", "fc."),
            ("base_model.fc.", "fc."),
            ("base_model.classifier.", "fc."),
            ("base_model.", "backbone."),
        ):
            if k.startswith(old):
                k = new + k[len(old) :]
                break
        out[k] = v
    if any(re.match(r"backbone\.features\.\d+\.conv\.4\.", k) for k in out):
        out = _official_mobilenet_to_torchvision(out)
    return out


def _official_mobilenet_to_torchvision(sd: dict) -> dict:
    """``features.N.conv.I[.net].rest`` (flat Sequential) -> torchvision's nesting.

    The official shift wraps the first conv (``conv.0.net``); ours wraps the first
    Conv2dNormActivation, so conv and BN of that group move under ``conv.0.net.``.
    """
    pat = re.compile(r"(backbone\.features\.(\d+)\.conv\.)(\d+)\.(net\.)?(.*)")
    expand = {}  # block index -> has the 1x1 expansion conv (8 layers instead of 5)
    for k in sd:
        m = pat.match(k)
        if m:
            expand[m.group(2)] = expand.get(m.group(2), False) or int(m.group(3)) > 4
    shifted = {pat.match(k).group(2) for k in sd if pat.match(k) and pat.match(k).group(4)}
    out = {}
    for k, v in sd.items():
        m = pat.match(k)
        if not m:
            out[k] = v
            continue
        head, block, idx, _, rest = m.groups()
        table = _MBV2_EXPAND if expand[block] else _MBV2_NO_EXPAND
        new = table.get(int(idx))
        if new is None:
            raise ValueError(
                f"official MobileNetV2 key {k!r}: no parameters expected at "
                f"conv.{idx} (ReLU6 position)"
            )
        if block in shifted and new.startswith("0."):
            new = "0.net." + new[2:]
        out[f"{head}{new}.{rest}"] = v
    return out


def _from_mmaction2(sd: dict) -> dict:
    if any(".non_local_block." in k or ".nl." in k for k in sd):
        raise ValueError(
            "mmaction2 checkpoints with non-local blocks are not supported "
            "(their NonLocal3d layout differs from the official TSM repo's)"
        )
    if any(re.match(r"backbone\.layer\d+\.\d+\.conv\.\d", k) for k in sd):
        raise ValueError(
            "mmaction2 MobileNetV2-TSM checkpoints are not supported (ResNet TSM "
            "only); the official TSM repo's MobileNetV2 checkpoints are"
        )
    rules = [
        (re.compile(r"^cls_head\.fc_cls\."), "fc."),
        (re.compile(r"^backbone\.conv1\.conv\."), "backbone.conv1."),
        (re.compile(r"^backbone\.conv1\.bn\."), "backbone.bn1."),
        (re.compile(r"\.conv(\d)\.conv\.(net\.)?"), r".conv\1.\2"),
        (re.compile(r"\.conv(\d)\.bn\."), r".bn\1."),
        (re.compile(r"\.downsample\.conv\."), ".downsample.0."),
        (re.compile(r"\.downsample\.bn\."), ".downsample.1."),
    ]
    out = {}
    for k, v in sd.items():
        if k.startswith(_IGNORED_PREFIXES):
            continue
        for pat, rep in rules:
            k = pat.sub(rep, k)
        out[k] = v
    return out


def infer_structure(sd: Mapping[str, Tensor]) -> dict:
    """Config fields that our-layout keys determine.

    arch, width, shift on/off, place, temporal_pool, non_local and num_classes;
    ``num_segments`` and ``fold_div`` are not in the weights.
    """
    keys = list(sd)
    if "fc.weight" not in sd:
        raise ValueError("checkpoint has no classifier weight ('fc.weight' after key mapping)")
    cfg: dict = {"num_classes": int(sd["fc.weight"].shape[0])}
    if any(k.startswith("backbone.features.") for k in keys):
        cfg["arch"] = "mobilenetv2"
        cfg["width"] = sd["backbone.features.0.0.weight"].shape[0] / 32
        cfg["shift"] = "offline" if any(".conv.0.net." in k for k in keys) else None
        cfg["in_channels"] = int(sd["backbone.features.0.0.weight"].shape[1])  # 3, or 2L (flow)
        return cfg
    if "backbone.conv1.weight" not in sd:
        raise ValueError(
            "cannot infer the architecture: no 'backbone.conv1.weight' or "
            "'backbone.features.*' key after key mapping"
        )
    cfg["arch"] = _resnet_arch(keys)
    cfg["width"] = sd["backbone.conv1.weight"].shape[0] / 64
    cfg["in_channels"] = int(sd["backbone.conv1.weight"].shape[1])  # 3 (RGB) or 2L (flow)
    cfg["temporal_pool"] = any(k.startswith("backbone.layer2.net.") for k in keys)
    cfg["non_local"] = any(".nl." in k for k in keys)
    blockres = any(k.endswith(".conv1.net.weight") for k in keys)
    block = any(re.match(r"backbone\.layer\d\.(net\.)?\d+\.(block\.)?net\.", k) for k in keys)
    cfg["shift"] = "offline" if (blockres or block) else None
    if block and not blockres:
        cfg["place"] = "block"
    return cfg


def _resnet_arch(keys: list) -> str:
    counts = []
    for i in range(1, 5):
        idx = {
            int(m.group(2))
            for k in keys
            if (m := re.match(rf"backbone\.layer{i}\.(net\.)?(\d+)\.", k))
        }
        counts.append(max(idx) + 1 if idx else 0)
    bottleneck = any(".conv3." in k for k in keys)
    for name, (block, layers) in RESNET_SPECS.items():
        if tuple(counts) == tuple(layers) and (block.expansion == 4) == bottleneck:
            return name
    kind = "bottleneck" if bottleneck else "basic"
    raise ValueError(
        f"no ResNet has {counts} {kind} blocks per stage; known: "
        f"{ {n: list(s[1]) for n, s in RESNET_SPECS.items()} }"
    )


def mmaction2_meta_config(meta: Mapping) -> dict:
    """Backbone fields from the config text mmengine stores in ``meta['cfg']`` (may be ``{}``)."""
    text = meta.get("cfg") if isinstance(meta, Mapping) else None
    if not isinstance(text, str):
        return {}
    cfg: dict = {}
    for field, pattern, cast in (
        ("num_segments", r"num_segments\s*=\s*(\d+)", int),
        ("fold_div", r"shift_div\s*=\s*(\d+)", int),
        ("place", r"shift_place\s*=\s*['\"](\w+)['\"]", str),
        ("temporal_pool", r"temporal_pool\s*=\s*(True|False)", lambda s: s == "True"),
    ):
        m = re.search(pattern, text)
        if m:
            cfg[field] = cast(m.group(1))
    return cfg
