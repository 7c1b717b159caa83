"""A local WordNet 3.0 through nltk's reader, never downloaded.

Debian's ``wordnet-base`` package (``apt-get install wordnet-base``, files in ``/usr/share/wordnet``)
or the folder named by ``WELLCHOSEN_WORDNET_DIR``. Used by METEOR (evaluation) and by the noun
lexicon of contrastive pairs.
"""

from __future__ import annotations

import io
import os
import warnings
from functools import lru_cache
from pathlib import Path

DEFAULT_WORDNET_DIR = "/usr/share/wordnet"
WORDNET_INSTALL_HINT = (
    "install Debian's wordnet-base package (apt-get install wordnet-base, files in /usr/share/wordnet) "
    "or set WELLCHOSEN_WORDNET_DIR to a folder with the WordNet 3.0 dict files (index.noun, data.noun, ...)"
)
_WORDNET_FILES = ("index.noun", "data.noun", "index.verb", "data.verb", "index.adj", "data.adj", "adj.exc")
# WordNet 3.0's lexicographer files, lexnames(5WN): nltk's reader wants them in a "lexnames" file
# that Debian's wordnet-base does not ship (it is part of the format, not of the data).
_LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()


class WordNetMissing(RuntimeError):
    """No local WordNet; the message says how to install one."""


def wordnet_dir() -> Path:
    return Path(os.environ.get("WELLCHOSEN_WORDNET_DIR") or DEFAULT_WORDNET_DIR)


def wordnet_available(path: str | Path | None = None) -> bool:
    folder = Path(path) if path else wordnet_dir()
    return all((folder / name).is_file() for name in _WORDNET_FILES)


@lru_cache(maxsize=4)
def _load_wordnet(folder: str):
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    # nltk opens corpora only under the roots of its data path: authorise this folder.
    if folder not in nltk.data.path:
        nltk.data.path.append(folder)

    class LocalWordNet(WordNetCorpusReader):
        def open(self, fileid):
            if fileid == "lexnames":
                return io.StringIO("".join(f"{i:02d}\t{name}\t0\n" for i, name in enumerate(_LEXNAMES)))
            return super().open(fileid)

        def map_wn(self, version="wordnet"):
            return None  # the local copy is the reference version: no mapping between WordNet versions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "multilingual functions are not available"
        return LocalWordNet(folder, None)


def load_wordnet(path: str | Path | None = None):
    """nltk's WordNet reader on a local WordNet 3.0 folder; :class:`WordNetMissing` when there is none."""
    folder = Path(path) if path else wordnet_dir()
    if not wordnet_available(folder):
        raise WordNetMissing(f"WordNet 3.0 is needed, not found in {folder}: {WORDNET_INSTALL_HINT}")
    return _load_wordnet(str(folder.resolve()))
