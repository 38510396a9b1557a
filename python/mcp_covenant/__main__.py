"""`python -m mcp_covenant ARGS...`: the same as the `mcp-covenant` command."""

import os
import subprocess
import sys

from mcp_covenant import find_binary


def main() -> None:
    try:
        exe = find_binary()
    except FileNotFoundError as e:
        sys.stderr.write("mcp-covenant (python): %s\n" % e)
        sys.exit(2)
    args = [exe, *sys.argv[1:]]
    # The binary's hints then say `python -m mcp_covenant ...` (or `uv run ...`).
    os.environ["MCP_COVENANT_LAUNCHER"] = "python"
    if os.name == "posix":
        # Replace this process: arguments, stdio, exit status and signals are the binary's.
        os.execv(exe, args)
    else:
        sys.exit(subprocess.run(args).returncode)


if __name__ == "__main__":
    main()
