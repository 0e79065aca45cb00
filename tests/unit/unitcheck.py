"""Shared by the Python unit tests: load a script as a module, and count failed checks."""
import importlib.util

failures = 0


def load(name, path):
    """The module of the script at path (a hack/ script whose name is not a module name)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(what, got, want):
    """Prints ok or FAIL for one comparison, counting failures."""
    global failures
    if got != want:
        failures += 1
        print(f"FAIL {what}: got {got!r}, want {want!r}")
    else:
        print(f"ok {what}")
