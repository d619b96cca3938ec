# A one-node Slurm cluster on loopback for the tests, sourced by them:
# munged (as user munge, its own key and socket), slurmctld and slurmd (as
# root, a generated slurm.conf on private ports), state and spool in
# $SLURM_DIR. Every daemon's pid goes into SLURM_PIDS; slurm_cluster_stop
# (the caller's EXIT trap) stops them by pid, also when the test failed.
#
#   SLURM_DIR=<fresh folder> source slurm_cluster.sh; slurm_cluster_start
#
# slurm_cluster_start returns 77 (the tests' "skipped") when Slurm or munge
# is not installed, and 1 when a daemon does not start, saying why.

SLURM_PIDS=()

slurm_cluster_stop() {
  local pid
  for pid in "${SLURM_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${SLURM_PIDS[@]}"; do
    # bounded: a daemon that ignores SIGTERM for 10 s gets SIGKILL
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  SLURM_PIDS=()
}

# Waits up to $2 seconds for command $1 to succeed.
slurm_wait_for() {
  local i
  for i in $(seq $(($2 * 5))); do
    if eval "$1" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  return 1
}

slurm_cluster_start() {
  local tool
  for tool in munged mungekey slurmctld slurmd sbatch scontrol squeue setpriv; do
    if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
      echo "SKIPPED: $tool is not installed (scripts/bootstrap.sh installs slurm-wlm and munge)"
      return 77
    fi
  done
  if [ "$(id -u)" != 0 ] || ! id munge >/dev/null 2>&1; then
    echo "SKIPPED: the test cluster needs root and the user munge"
    return 77
  fi
  export PATH="$PATH:/usr/sbin"
  local host munge_dir port
  host=$(hostname -s)
  munge_dir="$SLURM_DIR/munge"
  mkdir -p "$munge_dir" "$SLURM_DIR/state" "$SLURM_DIR/spool"
  chmod 755 "$SLURM_DIR"
  chown munge:munge "$munge_dir"
  chmod 755 "$munge_dir"  # the socket must be reachable; the key itself is 0600
  setpriv --reuid=munge --regid=munge --init-groups mungekey --create --keyfile="$munge_dir/munge.key"
  setpriv --reuid=munge --regid=munge --init-groups munged --foreground \
    --key-file="$munge_dir/munge.key" --socket="$munge_dir/munge.socket" \
    --pid-file="$munge_dir/munged.pid" --log-file="$munge_dir/munged.log" \
    --seed-file="$munge_dir/munged.seed" >"$SLURM_DIR/munged.out" 2>&1 &
  SLURM_PIDS+=($!)
  if ! slurm_wait_for "[ -S '$munge_dir/munge.socket' ]" 20; then
    echo "FAILED: munged did not start:"; cat "$SLURM_DIR/munged.out" "$munge_dir/munged.log" 2>/dev/null
    return 1
  fi
  # Private ports, so a system Slurm (or another test) is not disturbed.
  port=$((20000 + ($$ * 7) % 20000))
  cat >"$SLURM_DIR/slurm.conf" <<EOF
ClusterName=leakytest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
# cred_expire: how long a requeued job waits before it starts again (120 s
# by default; the requeue test would wait that long).
AuthInfo=socket=$munge_dir/munge.socket,cred_expire=10
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$SLURM_DIR/slurm.conf"
  slurmctld -D -i -f "$SLURM_CONF" >"$SLURM_DIR/slurmctld.out" 2>&1 &
  SLURM_PIDS+=($!)
  slurmd -D -f "$SLURM_CONF" >"$SLURM_DIR/slurmd.out" 2>&1 &
  SLURM_PIDS+=($!)
  if ! slurm_wait_for "scontrol ping | grep -q 'is UP'" 30; then
    echo "FAILED: slurmctld does not answer:"; tail -5 "$SLURM_DIR/slurmctld.out" "$SLURM_DIR/slurmctld.log" 2>/dev/null
    return 1
  fi
  if ! slurm_wait_for "sinfo -h -N -o %T | grep -Eq '^(idle|mixed|allocated)'" 30; then
    echo "FAILED: slurmd did not register its node:"; sinfo -N 2>&1; tail -5 "$SLURM_DIR/slurmd.out" "$SLURM_DIR/slurmd.log" 2>/dev/null
    return 1
  fi
  return 0
}
