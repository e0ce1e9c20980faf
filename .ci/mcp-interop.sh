#!/usr/bin/env bash
# Sourced by .ci/run: installs the Python MCP implementations the skills-mcp interop tests
# run against (FastMCP's skills client and server, the official `mcp` SDK) into a venv under
# target/, and exports SKILLS_MCP_PYTHON for the tests. Under CI=true the tests fail without
# it; elsewhere they skip. Versions are pinned: they are what the tests were written against.
# Run it by hand with `source .ci/mcp-interop.sh` before `cargo test -p skills-mcp`.

skills_mcp_interop() {
    local repo venv
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    venv="$repo/target/mcp-interop-venv"
    if [ ! -x "$venv/bin/python" ]; then
        mkdir -p "$repo/target"
        if ! python3 -m venv "$venv" 2>/dev/null; then
            # Debian ships venv's ensurepip separately.
            rm -rf "$venv"
            local sudo_cmd=()
            [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo -n)
            "${sudo_cmd[@]}" apt-get update -qq || true
            "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv \
                || echo "warning: could not install python3-venv" >&2
            python3 -m venv "$venv" || { echo "warning: no Python venv for the MCP interop tests" >&2; return 0; }
        fi
    fi
    if ! "$venv/bin/python" -c 'import fastmcp, mcp' 2>/dev/null; then
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            'fastmcp==4.2.3' 'mcp==2.3.0' \
            || { echo "warning: could not install fastmcp and mcp" >&2; return 0; }
    fi
    export SKILLS_MCP_PYTHON="$venv/bin/python"
    echo "MCP interop Python: $SKILLS_MCP_PYTHON ($("$SKILLS_MCP_PYTHON" -c 'import fastmcp, mcp.types; print("fastmcp", fastmcp.__version__)'))"
}
skills_mcp_interop
