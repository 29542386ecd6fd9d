#!/usr/bin/env bash
# A one-node Slurm on this machine, for the tests that launch with srun (Debian's slurm-wlm and munge).
#
#   scripts/slurm-one-node.sh install   apt-get installs slurmctld, slurmd, slurm-client and munge (root)
#   scripts/slurm-one-node.sh start     starts munged, slurmctld and slurmd (no systemd) unless they run,
#                                       and returns once the node takes jobs; prints SLURM_CONF=...
#   scripts/slurm-one-node.sh stop      stops the three daemons it started
#   scripts/slurm-one-node.sh status    sinfo of the node
#
# Everything lives in $XCALL_SLURM_DIR (default /tmp/xcall-slurm): slurm.conf, state, spool, pid files and
# logs; /etc/slurm is not touched, so srun and sinfo need SLURM_CONF=$XCALL_SLURM_DIR/slurm.conf. The node
# declares 8 CPUs whatever the machine has, so `srun -n 4` runs on a 2-core machine. Runs as root (Slurm's
# daemons and munged's key need it); CI runs as root.
set -euo pipefail

dir="${XCALL_SLURM_DIR:-/tmp/xcall-slurm}"
conf="$dir/slurm.conf"
node="$(hostname -s)"
export SLURM_CONF="$conf"

usage() {
    sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

running() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Polls a condition every 0.1 s for at most $1 seconds (daemons give no other readiness signal).
wait_for() {
    local seconds="$1"; shift
    local tries=$((seconds * 10))
    until "$@" >/dev/null 2>&1; do
        tries=$((tries - 1))
        ((tries > 0)) || return 1
        sleep 0.1
    done
}

write_conf() {
    mkdir -p "$dir/state" "$dir/spool"
    cat > "$conf" <<CONF
ClusterName=xcall
SlurmctldHost=$node
SlurmUser=root
AuthType=auth/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmdParameters=config_overrides
EnforcePartLimits=ALL
MailProg=/bin/true
ReturnToService=2
NodeName=$node CPUs=8 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
}

node_takes_jobs() { sinfo -h -n "$node" -o %T | grep -Eq '^(idle|mixed|allocated)'; }

start() {
    for program in munged slurmctld slurmd srun; do
        command -v "$program" >/dev/null || { echo "slurm-one-node: $program is not installed (scripts/slurm-one-node.sh install)" >&2; exit 1; }
    done
    [[ $(id -u) == 0 ]] || { echo "slurm-one-node: start needs root" >&2; exit 1; }
    mkdir -p "$dir"
    if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
        install -d -o munge -g munge -m 0755 /run/munge
        setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged
        wait_for 10 bash -c 'munge -n | unmunge' || { echo "slurm-one-node: munged did not answer" >&2; exit 1; }
    fi
    write_conf
    if ! running "$dir/slurmctld.pid"; then
        slurmctld -f "$conf" -i
    fi
    if ! running "$dir/slurmd.pid"; then
        slurmd -f "$conf"
    fi
    if ! wait_for 30 node_takes_jobs; then
        echo "slurm-one-node: node $node does not take jobs; sinfo says: $(sinfo -h -n "$node" -o '%T %E' 2>&1)" >&2
        tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
        exit 1
    fi
    echo "SLURM_CONF=$conf"
}

stop() {
    for daemon in slurmd slurmctld; do
        if running "$dir/$daemon.pid"; then
            kill "$(cat "$dir/$daemon.pid")"
        fi
    done
}

[[ $# -eq 1 ]] || usage
case "$1" in
    install)
        as_root=()
        [[ $(id -u) == 0 ]] || as_root=(sudo)
        "${as_root[@]}" apt-get update -q
        "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge
        ;;
    start) start ;;
    stop) stop ;;
    status) sinfo -N -n "$node" ;;
    *) usage ;;
esac
