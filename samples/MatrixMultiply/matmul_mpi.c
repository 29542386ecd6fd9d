/*
 * PMPI's master-worker matrix multiply in C with Open MPI, the side-by-side peer of Program.cs (same matrices,
 * same distribution, same checksum): C = A x B, A of ROWS x 1,200, B of 1,200 x 500.
 *
 *   mpicc -O2 -o matmul_mpi matmul_mpi.c && mpirun -np 4 ./matmul_mpi [ROWS]      (default 2,400)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define INNER 1200
#define COLUMNS 500

static void multiply(const double *a, const double *b, double *c, int rows)
{
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < INNER; k++) {
            double aik = a[(long)i * INNER + k];
            const double *brow = b + (long)k * COLUMNS;
            double *crow = c + (long)i * COLUMNS;
            for (int j = 0; j < COLUMNS; j++) crow[j] += aik * brow[j];
        }
}

static void share(int worker, int workers, int rows, int *first, int *count)
{
    *first = (int)((long)worker * rows / workers);
    *count = (int)((long)(worker + 1) * rows / workers) - *first;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rows = argc > 1 ? atoi(argv[1]) : 2400;
    int workers = size > 1 ? size - 1 : 1;
    double *b = calloc((size_t)INNER * COLUMNS, sizeof(double));
    if (rank == 0)
        for (long i = 0; i < (long)INNER * COLUMNS; i++) b[i] = (i % 13) * 0.5;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    MPI_Bcast(b, INNER * COLUMNS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int first, count;
    if (rank == 0) {
        double *a = malloc((size_t)rows * INNER * sizeof(double));
        double *c = calloc((size_t)rows * COLUMNS, sizeof(double));
        for (long i = 0; i < (long)rows * INNER; i++) a[i] = (i % 7) - 3.0;
        if (size == 1) {
            multiply(a, b, c, rows);
        } else {
            for (int w = 0; w < workers; w++) {
                share(w, workers, rows, &first, &count);
                MPI_Send(a + (long)first * INNER, count * INNER, MPI_DOUBLE, w + 1, 1, MPI_COMM_WORLD);
            }
            for (int w = 0; w < workers; w++) {
                share(w, workers, rows, &first, &count);
                MPI_Recv(c + (long)first * COLUMNS, count * COLUMNS, MPI_DOUBLE, w + 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
        double seconds = MPI_Wtime() - start;
        double checksum = 0;
        for (long i = 0; i < (long)rows * COLUMNS; i++) checksum += c[i];
        printf("matmul c-openmpi ranks=%d rows=%d seconds=%.4f checksum=%.1f\n", size, rows, seconds, checksum);
        free(a);
        free(c);
    } else {
        share(rank - 1, workers, rows, &first, &count);
        double *a = malloc((size_t)count * INNER * sizeof(double));
        double *c = calloc((size_t)count * COLUMNS, sizeof(double));
        MPI_Recv(a, count * INNER, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        multiply(a, b, c, count);
        MPI_Send(c, count * COLUMNS, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
        free(a);
        free(c);
    }
    free(b);
    MPI_Finalize();
    return 0;
}
