/*
 * Open MPI's ping-pong between ranks 0 and 1, for the call-cost benchmark's peer-mpi rows. The benchmark
 * compiles it with mpicc and starts it with mpirun -np 2 when Open MPI is installed.
 *
 *   mpi_pingpong BYTES:ROUNDS [BYTES:ROUNDS ...]
 *
 * For each size: a warm-up of ROUNDS / 10 round trips, then 5 batches of ROUNDS round trips (MPI_Send then
 * MPI_Recv of BYTES each way, blocking calls, which Open MPI's shared-memory transport serves by polling),
 * each batch timed on rank 0 after a barrier. Rank 0 prints one line per size, as limit_probe does:
 *   peer-mpi <bytes> <best-of-5 ns per round trip> <median-of-5 ns per round trip>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCHES 5
#define MAX_BYTES (16 << 20)

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void pingpong(int rank, unsigned char *buf, int bytes, long rounds)
{
    for (long i = 0; i < rounds; i++) {
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 mpi_pingpong BYTES:ROUNDS [BYTES:ROUNDS ...]\n");
        MPI_Finalize();
        return 2;
    }
    unsigned char *buf = malloc(MAX_BYTES);
    if (buf == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, 0x5a, MAX_BYTES);
    for (int a = 1; a < argc; a++) {
        int bytes = 0;
        long rounds = 0;
        if (sscanf(argv[a], "%d:%ld", &bytes, &rounds) != 2 || bytes < 1 || bytes > MAX_BYTES || rounds < 1) {
            if (rank == 0) fprintf(stderr, "mpi_pingpong: bad BYTES:ROUNDS '%s'\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        pingpong(rank, buf, bytes, rounds / 10 + 1);
        double ns[BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            pingpong(rank, buf, bytes, rounds);
            ns[b] = (MPI_Wtime() - start) * 1e9 / (double)rounds;
        }
        if (rank == 0) {
            qsort(ns, BATCHES, sizeof ns[0], by_value);
            printf("peer-mpi %d %.1f %.1f\n", bytes, ns[0], ns[BATCHES / 2]);
            fflush(stdout);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
