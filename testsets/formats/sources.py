"""The candidate sources an export writes.

Releases built before CandidateSource split "generated" in two published "generated" for both a
system's generated response and a masked-LM negative. The format versions that wrote it (JSONL
and CSV up to 3, and the Hugging Face folder of a release whose JSONL is one of those) still
write it for both, so that such a release's files keep the bytes its manifest records; later
versions write the stored value.
"""

from annotation.models import CandidateSource

LEGACY_GENERATED = "generated"
_JOINED = dict.fromkeys((CandidateSource.SYSTEM_RESPONSE.value, CandidateSource.MLM_NEGATIVE.value), LEGACY_GENERATED)


def published_source(source: str, *, split: bool) -> str:
    """``source`` as an export writes it: as stored when the format version has the split values
    (``split``), else "generated" for either of them."""
    return source if split else _JOINED.get(source, source)
