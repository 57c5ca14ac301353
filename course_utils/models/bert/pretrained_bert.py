"""The real BERT when it can be had, the course's BERT when it cannot: ``load_pretrained``.

The rules, in order:

1. A local directory (written by ``save_pretrained``) loads with ``local_files_only=True``: no network.
2. A hub name (``"bert-base-uncased"``) loads from the local Hugging Face cache if it is there, still offline.
3. Otherwise it is downloaded only if ``COURSE_ALLOW_DOWNLOADS=1`` was set before ``course_utils`` was
   imported (``course_utils/offline.py`` sets ``HF_HUB_OFFLINE=1`` otherwise) and huggingface.co answers an
   HTTP request within a second. If not, or if the download fails, a one-line message says why and
   ``fallback()`` gives the model instead. The offline path makes no network call and has no retry loop: it returns in
   milliseconds (a test measures it).

Models load with ``attn_implementation="eager"``, the implementation that returns attention weights
(sdpa returns none, silently). Every call returns ``(model, tokenizer, message)``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

from course_utils.validation import CourseInputError, check_choice

DEFAULT_MODEL = "bert-base-uncased"
KINDS = ("masked_lm", "model")  # BertForMaskedLM (logits over the vocabulary) or BertModel (hidden states)
ALLOW_DOWNLOADS = "COURSE_ALLOW_DOWNLOADS"
ATTENTION = "eager"
REACH_TIMEOUT_S = 1.0


def downloads_allowed() -> bool:
    """Whether the student asked for downloads (``COURSE_ALLOW_DOWNLOADS=1``)."""
    return os.environ.get(ALLOW_DOWNLOADS) == "1"


def hub_reachable(timeout: float = REACH_TIMEOUT_S) -> bool:
    """Whether the hub answers an HTTP request within ``timeout`` seconds (any status counts as an answer).

    An HTTP answer, not a TCP connection: some sandboxes accept every connection and then say nothing.
    The request runs in a daemon thread, so a slow name lookup or handshake cannot hold the caller.
    """
    import urllib.error
    import urllib.request

    from huggingface_hub import constants

    answered: list[bool] = []

    def ask() -> None:
        try:
            with urllib.request.urlopen(urllib.request.Request(constants.ENDPOINT, method="HEAD"), timeout=timeout):
                answered.append(True)
        except urllib.error.HTTPError:  # a status code is an answer
            answered.append(True)
        except (OSError, ValueError):  # no route, no name, no TLS, timeout, or not a URL
            pass

    probe = threading.Thread(target=ask, daemon=True)
    probe.start()
    probe.join(timeout)
    return bool(answered)


def _is_course_vocabulary(tokenizer) -> bool:
    from course_utils.models.bert.wordpiece import SPECIAL_TOKENS

    return tokenizer.convert_ids_to_tokens(list(range(len(SPECIAL_TOKENS)))) == list(SPECIAL_TOKENS)


def _in_local_cache(name: str) -> bool:
    """Whether the hub's cache on disk holds ``name``'s config.json: a look at the disk, before importing the
    library's auto classes (on some releases, transformers 5.17 with torch 2.15, that import alone takes a second)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except ValueError:  # not a repository id the hub accepts: the library's own load says why
        return True


def _load(source, kind: str, *, local_files_only: bool):
    """``(model, tokenizer, newly initialised parameter names)``, eager attention, in eval mode.

    The library's load report is silenced; the parameters it had to initialise at random (a ``BertModel``'s
    pooler, read from a masked-LM checkpoint that has none) are returned instead, for the message.
    """
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    model_class = AutoModelForMaskedLM if kind == "masked_lm" else AutoModel
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_files_only)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        model, info = model_class.from_pretrained(source, local_files_only=local_files_only,
                                                  attn_implementation=ATTENTION, output_loading_info=True)  # fmt: skip
    finally:
        hf_logging.set_verbosity(verbosity)
    if isinstance(source, Path) and _is_course_vocabulary(tokenizer):
        from course_utils.models.bert.wordpiece import load_tokenizer

        tokenizer = load_tokenizer(source)  # keeps the course's spaces when decoding ("cake ." not "cake.")
    return model.eval(), tokenizer, sorted(info.get("missing_keys", ()))


def _loaded(what: str, kind: str, new_parameters: list[str]) -> str:
    note = f"; initialised at random: {', '.join(new_parameters)}" if new_parameters else ""
    return f"loaded {what} ({kind}){note}"


def _looks_like_a_path(name: str) -> bool:
    return name.startswith((".", "/", "~", "\\")) or (len(name) > 1 and name[1] == ":")


def load_pretrained(name_or_path: str | os.PathLike = DEFAULT_MODEL, *, kind: str = "masked_lm",
                    fallback: Callable[[], tuple] | None = None, quiet: bool = False) -> tuple:  # fmt: skip
    """``(model, tokenizer, message)``: a saved directory, a cached or downloadable hub model, or ``fallback()``.

    ``fallback`` is called with no arguments and must return ``(model, tokenizer)``; without one, the
    model and tokenizer are ``None``. The message is printed when the fallback is used, unless ``quiet``.
    """
    kind = check_choice("kind", kind, KINDS)
    if fallback is not None and not callable(fallback):
        raise CourseInputError(f"fallback must be a function returning (model, tokenizer), or None; got {fallback!r}")
    if not isinstance(name_or_path, (str, os.PathLike)) or not str(name_or_path):
        raise CourseInputError(f"name_or_path must be a hub name or a directory, got {name_or_path!r}")

    path = Path(name_or_path).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise CourseInputError(f"{path} holds no model (config.json is missing); write one with save_pretrained")
        model, tokenizer, new_parameters = _load(path, kind, local_files_only=True)
        return model, tokenizer, _loaded(f"{path} from disk", kind, new_parameters)
    name = str(name_or_path)
    if isinstance(name_or_path, os.PathLike) or _looks_like_a_path(name) or path.exists():
        raise CourseInputError(f"no model directory at {path}")

    if _in_local_cache(name):
        try:
            model, tokenizer, new_parameters = _load(name, kind, local_files_only=True)
            return model, tokenizer, _loaded(f"{name} from the local Hugging Face cache", kind, new_parameters)
        except OSError:
            pass  # not whole in the cache

    from huggingface_hub import constants

    if not downloads_allowed():
        reason = f"is not available offline (set {ALLOW_DOWNLOADS}=1 with a network)"
    elif constants.HF_HUB_OFFLINE:
        reason = (f"cannot be downloaded: the hub is offline (set {ALLOW_DOWNLOADS}=1 before importing "
                  "course_utils, then restart)")  # fmt: skip
    elif not hub_reachable():
        reason = f"cannot be downloaded: {urlsplit(constants.ENDPOINT).hostname} does not answer"
    else:
        try:
            model, tokenizer, new_parameters = _load(name, kind, local_files_only=False)
            return model, tokenizer, _loaded(f"{name}, downloaded,", kind, new_parameters)
        except Exception as error:  # any failure of the download: say which, and fall back
            reason = f"could not be downloaded ({type(error).__name__}: {str(error).splitlines()[0][:120]})"
    if fallback is None:
        message = f"{name} {reason}; no fallback was given"
        model = tokenizer = None
    else:
        message = f"{name} {reason}; using the course's BERT instead"
        returned = fallback()
        if not (isinstance(returned, tuple) and len(returned) == 2):
            raise CourseInputError("fallback must return a pair (model, tokenizer)")
        model, tokenizer = returned
    if not quiet:
        print(message)
    return model, tokenizer, message
