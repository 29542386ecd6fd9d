/*
 * Open MPI's Allreduce (MPI_SUM of doubles) on every rank, for the mpi suite's peer rows. The benchmark
 * compiles it with mpicc and starts it with mpirun -np N when Open MPI is installed.
 *
 *   mpi_allreduce BYTES:ROUNDS [BYTES:ROUNDS ...]
 *
 * For each size: a warm-up of ROUNDS / 10 Allreduces, then 5 batches of ROUNDS, each timed on rank 0 after a
 * barrier. Rank 0 prints one line per size:
 *   peer-mpi-allreduce <bytes> <best-of-5 ns per Allreduce> <median-of-5 ns per Allreduce>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCHES 5
#define MAX_BYTES (64 << 20)

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *send = malloc(MAX_BYTES), *receive = malloc(MAX_BYTES);
    if (send == NULL || receive == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < MAX_BYTES / 8; i++) send[i] = rank + i % 7;
    for (int a = 1; a < argc; a++) {
        int bytes = 0;
        long rounds = 0;
        if (sscanf(argv[a], "%d:%ld", &bytes, &rounds) != 2 || bytes < 8 || bytes > MAX_BYTES || rounds < 1) {
            if (rank == 0) fprintf(stderr, "mpi_allreduce: bad BYTES:ROUNDS '%s'\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        int count = bytes / 8;
        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < rounds / 10 + 1; i++) MPI_Allreduce(send, receive, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double ns[BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            for (long i = 0; i < rounds; i++) MPI_Allreduce(send, receive, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            ns[b] = (MPI_Wtime() - start) * 1e9 / (double)rounds;
        }
        if (rank == 0) {
            qsort(ns, BATCHES, sizeof ns[0], by_value);
            printf("peer-mpi-allreduce %d %.1f %.1f\n", bytes, ns[0], ns[BATCHES / 2]);
            fflush(stdout);
        }
    }
    free(send);
    free(receive);
    MPI_Finalize();
    return 0;
}
