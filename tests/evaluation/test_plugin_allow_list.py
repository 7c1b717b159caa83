"""A plugin system runs code in the workers: only the plugins the deployment allows are imported."""

import sys

import pytest
from django.urls import reverse

from core.errors import UserError
from evaluation.models import System
from evaluation.scoring.backends import BACKENDS
from evaluation.scoring.loading import scorer_cache_clear, scorer_for
from evaluation.services.systems import system_register

PROBE = "tests.evaluation.plugin_import_probe"
ADMIN_FORM = {
    "name": "sneaky",
    "kind": "plugin",
    "dtype": "auto",
    "max_context_tokens": 512,
    "max_candidate_tokens": 128,
    "turn_separator": "\n",
}


@pytest.fixture(autouse=True)
def _fresh_scorers():
    scorer_cache_clear()
    yield
    scorer_cache_clear()


def test_a_callable_of_the_standard_library_is_no_plugin(db):
    with pytest.raises(UserError, match="plugin 'os.getcwd' is not allowed on this deployment"):
        system_register(name="cwd", kind="plugin", plugin="os.getcwd")
    assert not System.objects.exists()


def test_a_plugin_that_is_not_allowed_is_refused_before_its_module_is_imported(db, monkeypatch):
    monkeypatch.delitem(sys.modules, PROBE, raising=False)
    with pytest.raises(UserError, match="is not allowed"):
        system_register(name="probe", kind="plugin", plugin=f"{PROBE}.ProbePlugin")
    assert PROBE not in sys.modules


def test_the_admin_form_refuses_a_plugin_that_is_not_allowed(admin_client):
    response = admin_client.post(reverse("admin:evaluation_system_add"), {**ADMIN_FORM, "plugin": "os.getcwd"})
    page = response.content.decode()
    assert response.status_code == 200 and "errornote" in page
    assert "is not allowed on this deployment" in page
    assert not System.objects.exists()


def test_a_stored_plugin_that_is_not_allowed_is_refused_where_it_would_run(db):
    # a row written around the services (an older version, the database itself)
    system = System.objects.create(name="cwd", kind="plugin", plugin="os.getcwd")
    with pytest.raises(UserError, match="is not allowed"):
        scorer_for(system)
    with pytest.raises(UserError, match="is not allowed"):
        BACKENDS["plugin"].check_can_generate(system)


def test_the_shipped_baseline_needs_no_setting(db, settings):
    settings.WELLCHOSEN_PLUGINS = []
    system = system_register(name="tfidf", kind="plugin", plugin="evaluation.baselines.TfidfBaseline")
    assert scorer_for(system).score([["Hi there."]], [["Hi.", "Bye."]])


def test_the_setting_allows_a_class_by_its_path(db, settings):
    settings.WELLCHOSEN_PLUGINS = [f"{PROBE}.ProbePlugin"]
    assert system_register(name="probe", kind="plugin", plugin=f"{PROBE}.ProbePlugin").plugin.endswith("ProbePlugin")


def test_a_module_wildcard_allows_its_public_classes_only(db, settings):
    settings.WELLCHOSEN_PLUGINS = [f"{PROBE}.*"]
    system_register(name="probe", kind="plugin", plugin=f"{PROBE}.ProbePlugin")
    with pytest.raises(UserError, match="is not allowed"):
        system_register(name="private", kind="plugin", plugin=f"{PROBE}._Hidden")
    with pytest.raises(UserError, match="is not allowed"):  # a submodule is another module
        system_register(name="deeper", kind="plugin", plugin=f"{PROBE}.sub.ProbePlugin")


def test_an_entry_point_of_an_installed_package_allows_its_plugin(db, settings, tmp_path, monkeypatch):
    # given an installed distribution (its metadata on sys.path) that declares the plugin
    settings.WELLCHOSEN_PLUGINS = []
    info = tmp_path / "probe_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: probe-plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[wellchosen.plugins]\nprobe = {PROBE}:ProbePlugin\n")
    with pytest.raises(UserError, match="is not allowed"):
        system_register(name="probe", kind="plugin", plugin=f"{PROBE}.ProbePlugin")
    monkeypatch.syspath_prepend(str(tmp_path))
    # then the plugin registers and scores
    system = system_register(name="probe", kind="plugin", plugin=f"{PROBE}.ProbePlugin")
    assert [s.loss for s in scorer_for(system).score([["Hi."]], [["a", "b"]])[0]] == [0.0, 0.0]


def test_a_function_is_no_plugin_even_where_allowed(db, settings):
    settings.WELLCHOSEN_PLUGINS = ["os.getcwd"]
    with pytest.raises(UserError, match="is not a class"):
        system_register(name="cwd", kind="plugin", plugin="os.getcwd")
