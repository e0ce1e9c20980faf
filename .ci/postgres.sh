# A PostgreSQL server for skills-store-postgres's tests; sourced by .ci/run (one line), or
# by hand: `source .ci/postgres.sh` (then `skills_pg_stop` to stop it).
#
# Installs PostgreSQL from Debian when no initdb is found under /usr/lib/postgresql, creates
# a cluster in a fresh temporary directory owned by an unprivileged user (`postgres`, or
# `skillspg` created here; the current user when not root), starts it on a loopback port
# and a unix socket in that directory, creates the ordinary role `skills` (no superuser,
# no BYPASSRLS: row-level security applies to it) owning the database `skills`, and exports
# SKILLS_PG_URL. Nothing is left failing: if any step fails, it says why on stderr and
# SKILLS_PG_URL stays unset (the tests then fail under CI=true, naming the variable).

skills_pg_start() {
    local bindir port dir owner run
    bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
        if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
            echo "postgres.sh: no PostgreSQL under /usr/lib/postgresql and cannot install it" >&2
            return 1
        fi
        apt-get update -qq || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || {
            echo "postgres.sh: apt-get install postgresql failed" >&2
            return 1
        }
        bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    fi
    if [ "$(id -u)" -eq 0 ]; then
        owner=postgres
        if ! id -u "$owner" >/dev/null 2>&1; then
            owner=skillspg
            id -u "$owner" >/dev/null 2>&1 || useradd --system --no-create-home "$owner"
        fi
        run=(runuser -u "$owner" --)
    else
        owner=$(id -un)
        run=()
    fi
    dir=$(mktemp -d /tmp/skills-pg.XXXXXX)
    chmod 755 "$dir"
    chown "$owner" "$dir"
    # A free loopback port: the first of 55432.. nobody listens on.
    port=${SKILLS_PG_PORT:-55432}
    while (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        port=$((port + 1))
    done
    "${run[@]}" "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
        >"$dir/initdb.log" 2>&1 || {
        echo "postgres.sh: initdb failed:" >&2
        cat "$dir/initdb.log" >&2
        return 1
    }
    # Many test processes and pools at once; fsync and synchronous_commit stay on (the
    # defaults), so the benchmarks measure durable commits.
    "${run[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-k $dir -p $port -c listen_addresses=127.0.0.1 -c max_connections=400" start \
        >/dev/null || {
        echo "postgres.sh: the server did not start:" >&2
        cat "$dir/server.log" >&2
        return 1
    }
    "${run[@]}" "$bindir/psql" -h "$dir" -p "$port" -U postgres -d postgres -qAt \
        -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE skills LOGIN PASSWORD 'skills' NOSUPERUSER NOBYPASSRLS" \
        -c "CREATE DATABASE skills OWNER skills" >/dev/null || {
        echo "postgres.sh: creating the role and database failed" >&2
        return 1
    }
    export SKILLS_PG_URL="postgres://skills:skills@127.0.0.1:$port/skills"
    export SKILLS_PG_DIR="$dir" SKILLS_PG_BIN="$bindir" SKILLS_PG_OWNER="$owner"
    echo "postgres.sh: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $dir)"
}

skills_pg_stop() {
    [ -n "${SKILLS_PG_DIR:-}" ] || return 0
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$SKILLS_PG_OWNER" -- "$SKILLS_PG_BIN/pg_ctl" -D "$SKILLS_PG_DIR/data" -m fast stop >/dev/null || true
    else
        "$SKILLS_PG_BIN/pg_ctl" -D "$SKILLS_PG_DIR/data" -m fast stop >/dev/null || true
    fi
    rm -rf "$SKILLS_PG_DIR"
    unset SKILLS_PG_URL SKILLS_PG_DIR
}

skills_pg_start || echo "postgres.sh: no PostgreSQL for the tests (SKILLS_PG_URL unset)" >&2
