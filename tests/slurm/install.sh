#!/bin/sh
# Install Debian's Slurm and munge for the real-cluster tests (tests/test_matrix_slurm_real.py),
# only when they are missing. A no-op where they are present, where we are not root or where
# apt-get is absent: the tests then skip and say why. Services are kept from starting during
# the install (a deny-all policy-rc.d): the tests start their own daemons, without systemd.
set -u
if command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 \
    && command -v sbatch >/dev/null 2>&1 && command -v munged >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "tests/slurm/install.sh: not root or no apt-get; the real-cluster tests will skip" >&2
    exit 0
fi
policy=/usr/sbin/policy-rc.d
planted=no
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && planted=yes
fi
export DEBIAN_FRONTEND=noninteractive
status=0
apt-get update -qq >/dev/null && \
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null || status=$?
[ "$planted" = yes ] && rm -f "$policy"
if [ "$status" != 0 ]; then
    echo "tests/slurm/install.sh: apt-get could not install slurm-wlm and munge (status $status);" \
        "the real-cluster tests will skip" >&2
fi
exit 0
