#!/usr/bin/env bash
# Makes a local base image for the container test where no image registry can be reached: a
# minimal Debian trixie (what the official node:26-trixie-slim is made from) from the machine's
# Debian mirror (debootstrap, which needs nothing newer than bookworm's to make it), with this
# machine's Node and npm.
#   scripts/container-base.sh [image]        (does nothing when the image exists; name it for the
#                                             suite and the Node version, as the container test does)
set -euo pipefail
image="${1:-localhost/slack-approvals-node-base:trixie-$(node -v)}"
if podman image exists "$image"; then exit 0; fi
mirror="${DEBIAN_MIRROR:-$( (sed -nE 's/^URIs: *([^ ]+).*/\1/p; s/^deb +(\[[^]]*\] +)?([^ ]+).*/\2/p' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true) | head -1)}"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
# libatomic1: the official Node 26 build links it ("libatomic.so.1: cannot open shared object
# file" without it), and a minimal Debian does not have it.
debootstrap --variant=minbase --include=libatomic1 trixie "$root" "${mirror:-http://deb.debian.org/debian}" >/dev/null
# The node and the npm on PATH, wherever each lives (CI's Node comes without an npm of its own).
node_bin="$(readlink -f "$(command -v node)")"
npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
cp "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
# What this machine's npm needs to trust its registry's certificate: the machine's CA bundle.
cp /etc/ssl/certs/ca-certificates.crt "$root/usr/local/share/machine-ca.crt"
tar -C "$root" -c . | podman import \
  --change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/machine-ca.crt' \
  - "$image" >/dev/null
