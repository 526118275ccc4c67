#!/bin/sh
# Makes a minimal Debian base image with Node and npm, without any image registry: debootstrap
# (minbase) from Debian's archive, a Node binary copied in and npm's own package from the npm
# registry, imported into podman. For machines that reach Debian's archive and the npm registry
# but no image registry.
#
#   scripts/container-base.sh TAG [NODE_BINARY]
#
# NODE_BINARY defaults to the Node 22 of this checkout (node_modules/node/bin/node, after npm ci).
# NPM_VERSION (default: the system npm's version) picks npm; MIRROR overrides Debian's archive.
set -eu
tag=$1
node=${2:-$(dirname "$0")/../node_modules/node/bin/node}
npm_version=${NPM_VERSION:-$(npm --version)}
mirror=${MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

debootstrap --variant=minbase bookworm "$root/fs" "$mirror" >/dev/null
# What an image never reads: documentation, locales, apt's lists and caches.
rm -rf "$root/fs/usr/share/doc" "$root/fs/usr/share/man" "$root/fs/usr/share/info" "$root/fs/usr/share/locale" \
  "$root/fs/var/lib/apt/lists"/* "$root/fs/var/cache/apt"/*
install -m 0755 "$node" "$root/fs/usr/local/bin/node"
# npm's package bundles its dependencies, so its tarball is the whole of npm, however the host's
# own npm was installed.
(cd "$root" && npm pack --silent "npm@$npm_version" >/dev/null)
mkdir -p "$root/fs/usr/local/lib/node_modules/npm"
tar -xzf "$root"/npm-*.tgz -C "$root/fs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/fs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/fs/usr/local/bin/npx"
# CA certificates so npm can reach the registry over TLS: the host's bundle, as Debian ships it.
mkdir -p "$root/fs/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$root/fs/etc/ssl/certs/ca-certificates.crt"
"$root/fs/usr/local/bin/node" --version >/dev/null
"$root/fs/usr/local/bin/node" "$root/fs/usr/local/lib/node_modules/npm/bin/npm-cli.js" --version >/dev/null
tar -C "$root/fs" -c . | podman import --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["node"]' - "$tag" >/dev/null
echo "$tag"
