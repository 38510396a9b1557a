# The mcp-covenant container: the fully static Linux binary and nothing else.
#
#   scripts/dist.sh                      # on Linux: writes dist/docker/ARCH/mcp-covenant
#   docker build -t mcp-covenant .       # (the release workflow builds amd64 + arm64)
#   docker run --rm -v "$PWD:/src" -w /src mcp-covenant check --against new.lock
#
# With nothing around the binary, a stdio server cannot run inside it (no node, no
# python): capture where the server runs, or use --http with an IP address (no resolver
# here for host names), and check lockfiles in the container.
FROM scratch
ARG TARGETARCH=amd64
COPY dist/docker/${TARGETARCH}/mcp-covenant /mcp-covenant
LABEL org.opencontainers.image.source="https://github.com/mcp-covenant/mcp-covenant" \
      org.opencontainers.image.description="Semver for an MCP server's interface" \
      org.opencontainers.image.licenses="MIT"
WORKDIR /src
ENTRYPOINT ["/mcp-covenant"]
