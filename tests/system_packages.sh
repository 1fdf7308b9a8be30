#!/bin/sh
# Install the Debian packages whose real programs the tests run, only those missing:
# slurm-wlm and munge for the one-node cluster (tests/test_matrix_slurm_real.py), neovim
# for the language server's real client (tests/test_lsp_neovim.py), npm to install the SARIF
# Multitool from (tests/npm_consumers.sh, which `make test` runs next). A no-op where they are
# present, where we are not root or where apt-get is absent: those tests then skip and say
# why. Services are kept from starting during the install (a deny-all policy-rc.d): the
# tests start their own daemons, without systemd.
set -u
missing=""
for pair in slurmctld:slurm-wlm slurmd:slurm-wlm sbatch:slurm-wlm munged:munge nvim:neovim npm:npm; do
    command -v "${pair%%:*}" >/dev/null 2>&1 && continue
    case " $missing " in *" ${pair#*:} "*) ;; *) missing="$missing ${pair#*:}" ;; esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "tests/system_packages.sh: not root or no apt-get; the tests that need$missing will skip" >&2
    exit 0
fi
policy=/usr/sbin/policy-rc.d
planted=no
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && planted=yes
fi
export DEBIAN_FRONTEND=noninteractive
failed=""
# One package at a time: one that cannot be installed leaves the others' tests running.
if apt-get update -qq >/dev/null; then
    for package in $missing; do
        apt-get install -y -qq --no-install-recommends "$package" >/dev/null || failed="$failed $package"
    done
else
    failed="$missing"
fi
[ "$planted" = yes ] && rm -f "$policy"
if [ -n "$failed" ]; then
    echo "tests/system_packages.sh: apt-get could not install$failed; the tests that need them will skip" >&2
fi
exit 0
