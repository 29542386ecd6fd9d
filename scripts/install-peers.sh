#!/usr/bin/env bash
# Installs the Debian packages the benchmark's probes and peers need, for developers and CI:
#
#   gcc                            the C limit probe (bench/Probes/limit_probe.c); without it, a C# probe
#   openmpi-bin libopenmpi-dev     the peer-mpi rows: Open MPI's ping-pong (bench/Probes/mpi_pingpong.c),
#                                  built with mpicc and run with mpirun -np 2; without them, no peer-mpi rows
#   golang-go erlang-base          the Go and Erlang rings of `--suite channels`
#   afl++ xxd                      scripts/fuzz.sh (AFL++ drives the SharpFuzz-instrumented readers; xxd keeps
#                                  the corpus as hex text)
#
#   scripts/install-peers.sh       as root, or as a user who may sudo
#
# Everything else the benchmark needs comes with the .NET SDK and NuGet.
set -euo pipefail

packages=(gcc openmpi-bin libopenmpi-dev golang-go erlang-base afl++ xxd)

as_root=()
if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-peers: run as root (or install sudo)" >&2; exit 1; }
    as_root=(sudo)
fi

"${as_root[@]}" apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${packages[@]}"
