"""core.imports_beside: modules imported in a thread while the caller's block runs."""

import sys
import threading

from core.imports_beside import modules_imported_beside


def module_file(folder, name: str, body: str) -> str:
    (folder / f"{name}.py").write_text(body, encoding="utf-8")
    return name


def test_the_modules_are_imported_in_another_thread_by_the_blocks_end(tmp_path, monkeypatch):
    # given a module that records the thread that imports it
    monkeypatch.syspath_prepend(str(tmp_path))
    name = module_file(tmp_path, "beside_probe_a", "import threading\nTHREAD = threading.current_thread().name\n")
    monkeypatch.delitem(sys.modules, name, raising=False)
    # when it is imported beside a block
    with modules_imported_beside([name]) as importing:
        pass
    # then the block's end waited for the thread, which imported it
    assert not importing.is_alive()
    assert sys.modules[name].THREAD == importing.name != threading.current_thread().name


def test_a_module_that_fails_to_import_is_left_to_the_code_that_needs_it(tmp_path, monkeypatch):
    # given a module whose import raises, and one after it that imports
    monkeypatch.syspath_prepend(str(tmp_path))
    broken = module_file(tmp_path, "beside_probe_broken", "raise RuntimeError('no')\n")
    fine = module_file(tmp_path, "beside_probe_fine", "VALUE = 1\n")
    for name in (broken, fine):
        monkeypatch.delitem(sys.modules, name, raising=False)
    # when both are imported beside a block
    with modules_imported_beside([broken, fine]) as importing:
        importing.join()
    # then the block ran without an error, the broken one is not loaded and the next one is
    assert broken not in sys.modules
    assert sys.modules[fine].VALUE == 1
