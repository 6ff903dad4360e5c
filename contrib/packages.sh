# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Sourced by contrib/adapt2.sh and contrib/ompi5.sh: root commands (directly
# as root, else through sudo) and installing the Debian packages missing.

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# install_packages PACKAGE...: installs those not installed yet (one apt run).
install_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "== installing Debian packages: ${missing[*]}"
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}
