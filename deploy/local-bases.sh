#!/bin/sh
# Base images built from Debian 12 (bookworm) packages, for a machine that cannot pull
# from Docker Hub (an offline mirror of Debian is enough). Needs root, debootstrap and
# podman (or docker: set ENGINE=docker). Builds:
#   localhost/giants-base-python:bookworm   python3 (3.11) + venv   -> BASE_IMAGE
#   localhost/giants-base-redis:bookworm    redis-server 7.0         -> REDIS_IMAGE
#   localhost/giants-base-haproxy:bookworm  haproxy 2.6              -> PROXY_IMAGE
# then use them with deploy/smoke.py --local-bases (or set the three variables for
# compose yourself, see deploy/compose.yaml). The Redis and HAProxy images start their
# programs the way the official images do, from the same paths.
#
#   sudo sh deploy/local-bases.sh [WORKDIR]     (WORKDIR: where the root trees go, default /var/tmp/giants-bases)
# MIRROR (default http://deb.debian.org/debian) picks the package mirror; CA_BUNDLE
# (default: none) is copied into every image as its system CA bundle, for a network
# whose HTTPS goes through an intercepting proxy (pip in the image build needs it).
set -eu
ENGINE=${ENGINE:-podman}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
WORK=${1:-/var/tmp/giants-bases}
mkdir -p "$WORK"

build() {  # name, packages, directories to make, then `--change` instructions for the image
    name=$1 packages=$2 dirs=$3
    shift 3
    root="$WORK/rootfs-$name"
    if [ ! -x "$root/bin/sh" ]; then
        rm -rf "$root"
        debootstrap --variant=minbase --include="$packages" bookworm "$root" "$MIRROR"
    fi
    for dir in $dirs; do mkdir -p "$root$dir"; done
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    if [ -n "${CA_BUNDLE:-}" ]; then
        mkdir -p "$root/etc/ssl/certs"
        cp "$CA_BUNDLE" "$root/etc/ssl/certs/ca-certificates.crt"
    fi
    tar -C "$root" -c . | "$ENGINE" import "$@" - "localhost/giants-base-$name:bookworm"
}

build python python3,python3-venv,ca-certificates "" \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["python3"]'
# The official redis image keeps its data in /data (compose mounts a volume there).
build redis redis-server /data \
    --change 'WORKDIR /data' \
    --change 'EXPOSE 6379' \
    --change 'CMD ["redis-server"]'
# The official haproxy image reads /usr/local/etc/haproxy/haproxy.cfg (compose mounts
# deploy/haproxy.cfg there), runs in the foreground in master-worker mode and stops
# on SIGUSR1 (a soft stop). `docker import --change` takes no STOPSIGNAL (podman's
# does): a one-line build on top of the import sets it, for both engines.
build haproxy haproxy /usr/local/etc/haproxy \
    --change 'CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]'
mkdir -p "$WORK/stopsignal"
printf 'FROM localhost/giants-base-haproxy:bookworm\nSTOPSIGNAL SIGUSR1\n' >"$WORK/stopsignal/Dockerfile"
"$ENGINE" build -t localhost/giants-base-haproxy:bookworm "$WORK/stopsignal"
"$ENGINE" images --filter reference='localhost/giants-base-*'
