#!/usr/bin/env bash
# pgvector for the PostgreSQL store's recall by meaning (docs/sources.md "pgvector").
# Debian bookworm has no pgvector package; Debian trixie's *source* package builds against
# bookworm's postgresql-server-dev-15 in seconds. The trixie deb-src line lives in a private
# apt state under $PGVECTOR_WORK, so the system's apt (sources, lists) is never switched to
# trixie. Idempotent: does nothing when the extension is installed already. Needs root.
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-15}"
PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"
WORK="${PGVECTOR_WORK:-/var/tmp/promptctx-pgvector}"

if [ -x "$PG_CONFIG" ]; then
  ext="$("$PG_CONFIG" --sharedir)/extension/vector.control"
  lib="$("$PG_CONFIG" --pkglibdir)/vector.so"
  if [ -f "$ext" ] && [ -f "$lib" ]; then
    echo "== pgvector: installed ($(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ext"))"
    exit 0
  fi
fi

export DEBIAN_FRONTEND=noninteractive
echo "== pgvector: building Debian trixie's source package against PostgreSQL ${PG_MAJOR}"
if ! dpkg -s "postgresql-server-dev-${PG_MAJOR}" dpkg-dev make gcc >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends \
    "postgresql-server-dev-${PG_MAJOR}" dpkg-dev make gcc >/dev/null
fi

# A private apt: its own sources list (trixie deb-src only), lists and cache.
mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial" "$WORK/src"
cat > "$WORK/sources.list" <<'LIST'
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
LIST
APT_OPTS=(
  -o "Dir::Etc::SourceList=$WORK/sources.list"
  -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State::Lists=$WORK/lists"
  -o "Dir::Cache=$WORK/cache"
  -o "APT::Sandbox::User=root"
)
apt-get "${APT_OPTS[@]}" update -qq
cd "$WORK/src"
rm -rf pgvector-*/
apt-get "${APT_OPTS[@]}" source -qq pgvector >/dev/null
cd "$(find . -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)"
# OPTFLAGS="": portable code (no -march=native), as Debian builds it.
make -s PG_CONFIG="$PG_CONFIG" OPTFLAGS="" >/dev/null
make -s PG_CONFIG="$PG_CONFIG" OPTFLAGS="" install >/dev/null
echo "== pgvector: installed $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$("$PG_CONFIG" --sharedir)/extension/vector.control")"
