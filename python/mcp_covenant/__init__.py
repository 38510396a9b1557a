"""mcp-covenant, the native binary this wheel installs as the `mcp-covenant` script.

`python -m mcp_covenant ARGS...` runs it; `find_binary()` gives its path.
"""

import os
import sys
import sysconfig

__all__ = ["find_binary"]


def _recorded(here: str, exe: str):
    """The binary this package's own installation wrote, as its RECORD lists it (the
    interpreter's `scripts/` may hold another installation's)."""
    site = os.path.dirname(here)
    try:
        names = os.listdir(site)
    except OSError:
        return None
    for name in names:
        if not (name.startswith("mcp_covenant-") and name.endswith(".dist-info")):
            continue
        try:
            with open(os.path.join(site, name, "RECORD"), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            entry = line.rsplit(",", 2)[0]
            if os.path.basename(entry) == exe:
                p = os.path.normpath(os.path.join(site, entry))
                if os.path.isfile(p):
                    return p
    return None


def find_binary() -> str:
    """The path of the `mcp-covenant` binary installed with this package."""
    exe = "mcp-covenant" + (sysconfig.get_config_var("EXE") or "")
    here = os.path.dirname(os.path.abspath(__file__))
    own = _recorded(here, exe)
    if own:
        return own
    candidates = [
        # A virtual environment or the interpreter's own prefix.
        sysconfig.get_path("scripts"),
        # `pip install --user`.
        sysconfig.get_path("scripts", scheme=os.name + "_user")
        if os.name + "_user" in sysconfig.get_scheme_names()
        else None,
        # `pip install --target DIR`: DIR/bin next to DIR/mcp_covenant.
        os.path.join(os.path.dirname(here), "bin"),
        # The directory of the running interpreter (some Windows layouts).
        os.path.dirname(sys.executable),
    ]
    for d in candidates:
        if d:
            p = os.path.join(d, exe)
            if os.path.isfile(p):
                return p
    raise FileNotFoundError(
        "the mcp-covenant binary is not installed next to this package (looked in: "
        + ", ".join(d for d in candidates if d)
        + ")"
    )
