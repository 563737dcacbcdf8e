# A single-node Slurm cluster started by a test: slurmctld and slurmd of
# Debian's slurm-wlm, as this user, with a configuration of their own under
# $1 (nothing in /etc is touched). No munge: auth/none and cred/none.
#
#   slurm_start DIR   starts it, or fails with the reason in $slurm_why
#   slurm_stop        stops it
# While it runs, SLURM_CONF points the Slurm commands at it.

slurm_why=""

slurm_start() {
    local dir=$1 host cpus mem port i
    slurm_why=""
    for cmd in slurmctld slurmd sbatch squeue; do
        command -v "$cmd" >/dev/null 2>&1 ||
            { slurm_why="$cmd not found: install Slurm (Debian: apt-get install slurm-wlm)"; return 1; }
    done
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
    port=$((20000 + RANDOM % 20000))
    mkdir -p "$dir/state" "$dir/spool" "$dir/log"
    cat >"$dir/slurm.conf" <<CONF
ClusterName=kit-test
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=kit Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -i -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 ||
        { slurm_why="slurmctld did not start: $(tail -n 3 "$dir/log/slurmctld.log" "$dir/log/slurmctld.out" 2>/dev/null | tr '\n' ' ')"; return 1; }
    slurmd -f "$SLURM_CONF" >"$dir/log/slurmd.out" 2>&1 ||
        { slurm_why="slurmd did not start: $(tail -n 3 "$dir/log/slurmd.log" "$dir/log/slurmd.out" 2>/dev/null | tr '\n' ' ')"; slurm_stop; return 1; }
    for ((i = 0; i < 30; i++)); do
        if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)'; then
            return 0
        fi
        sleep 1
    done
    # shellcheck disable=SC2034 # read by the test that starts Slurm
    slurm_why="the node did not become idle: $(sinfo -h 2>&1 | head -n 2 | tr '\n' ' ') $(tail -n 3 "$dir/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
    slurm_stop
    return 1
}

slurm_stop() {
    local dir
    [ -n "${SLURM_CONF:-}" ] || return 0
    dir=$(dirname "$SLURM_CONF")
    for pid in "$dir/slurmd.pid" "$dir/slurmctld.pid"; do
        [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null
    done
    sleep 1
    unset SLURM_CONF
}
