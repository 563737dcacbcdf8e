#!/usr/bin/env bash
# Makes sure the test tools are here: Bats (1.7 or newer) with its
# bats-support and bats-assert libraries. Installs what is missing with
# apt-get when this user may (root, or sudo without a password); otherwise
# says exactly what to install, and exits 1.
set -u

lib_dirs="${BATS_LIB_PATH:-}:$(npm root -g 2>/dev/null):/usr/lib/bats:/usr/local/lib/bats:/opt/homebrew/lib:/usr/local/lib"

has_lib() {
    local d IFS=:
    for d in $lib_dirs; do
        [ -n "$d" ] && [ -f "$d/$1/load.bash" ] && return 0
    done
    return 1
}

bats_ok() {
    command -v bats >/dev/null 2>&1 || return 1
    local v
    v=$(bats --version 2>/dev/null | awk '{print $2}')
    # 1.7 brought bats_load_library, which the tests use.
    [ -n "$v" ] && [ "$(printf '1.7.0\n%s\n' "$v" | sort -V | head -n 1)" = 1.7.0 ]
}

missing() {
    local m=()
    bats_ok || m+=(bats)
    has_lib bats-support || m+=(bats-support)
    has_lib bats-assert || m+=(bats-assert)
    echo "${m[@]:-}"
}

need=$(missing)
[ -z "$need" ] && exit 0

if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo"
        else
            sudo="none"
        fi
    fi
    if [ "$sudo" != none ]; then
        echo "setting up the test tools: apt-get install $need" >&2
        # shellcheck disable=SC2086
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need >/dev/null 2>&1 ||
            { $sudo apt-get update -q >/dev/null 2>&1 &&
              $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need >/dev/null; }
        need=$(missing)
        [ -z "$need" ] && exit 0
    fi
fi

cat >&2 <<MSG
The kit's tests need Bats 1.7 or newer with bats-support and bats-assert.
Missing here: $need
  Debian 12, Ubuntu 24.04 or newer:  sudo apt-get install bats bats-support bats-assert
  elsewhere (needs Node.js):         npm install -g bats bats-support bats-assert
                                     (make test finds them there by itself)
Then run the tests again: make test
MSG
exit 1
