"""Which masked LM an empty ``--mlm`` means: the WELLCHOSEN_MLM_MODEL setting, or, while that is
unset, the demo's toy masked LM once `load_demo` has trained it (negatives.services.demo), so that a
newcomer's first round generates negatives without configuring anything."""

from pathlib import Path

from django.conf import settings

from core.toy_models import folder_is_toy

DEMO_MLM = "demo-tiny-bert"
SETTING = "WELLCHOSEN_MLM_MODEL"
TOY_DEFAULT_NOTE = (
    "The default masked LM is the demo's toy model (WELLCHOSEN_MLM_MODEL is unset): good for trying the "
    "workflow, not for negatives to annotate for real."
)


def demo_mlm_folder() -> Path:
    return Path(settings.WELLCHOSEN_DATA_DIR) / "models" / DEMO_MLM


def mlm_default() -> tuple[str, str]:
    """``(folder, where it came from)`` for error messages: the setting when set; else the demo
    masked LM when its folder holds a model; else the empty setting (loading then says to set it)."""
    if settings.WELLCHOSEN_MLM_MODEL:
        return settings.WELLCHOSEN_MLM_MODEL, SETTING
    demo = demo_mlm_folder()
    if (demo / "config.json").is_file():
        return str(demo), f"the demo masked LM ({SETTING} unset)"
    return "", SETTING


def mlm_default_is_toy() -> bool:
    """Whether the default masked LM is a toy model (its folder's marker, core.toy_models), for the pages to say so."""
    return folder_is_toy(mlm_default()[0])
