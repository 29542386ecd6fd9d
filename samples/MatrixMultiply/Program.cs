using System.Diagnostics;
using System.Globalization;
using System.Numerics;
using System.Runtime.InteropServices;
using XCall.Communicator;

// PMPI's master-worker matrix multiply: C = A x B, A of ROWS x 1,200, B of 1,200 x 500. Rank 0 (the master)
// broadcasts B, sends each worker its share of A's rows, and gathers the rows of C the workers send back; with
// one rank the master multiplies alone. matmul_mpi.c beside this file is the same program in C with Open MPI.
//
//   xcall run -n 4 -- dotnet XCall.Samples.MatrixMultiply.dll [ROWS]        (default 2,400)
//   mpicc -O2 -o matmul_mpi matmul_mpi.c && mpirun -np 4 ./matmul_mpi [ROWS]
//
// Rank 0 prints the time from the broadcast to the last row of C and a checksum both programs agree on.
const int Inner = 1200;
const int Columns = 500;
const int RowsTag = 1;
const int ResultTag = 2;
int rows = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 2400;

Communicator world = await Communicator.JoinAsync();
var b = new double[Inner * Columns];
if (world.Rank == 0)
{
    for (int i = 0; i < b.Length; i++)
    {
        b[i] = (i % 13) * 0.5;
    }
}
world.Barrier();
long start = Stopwatch.GetTimestamp();
world.Broadcast(b, 0);
int workers = Math.Max(1, world.Size - 1);
(int First, int Count) Share(int worker) => (worker * rows / workers, (worker + 1) * rows / workers - worker * rows / workers);

if (world.Rank == 0)
{
    var a = new double[rows * Inner];
    for (int i = 0; i < a.Length; i++)
    {
        a[i] = (i % 7) - 3.0;
    }
    var c = new double[rows * Columns];
    if (world.Size == 1)
    {
        Multiply(a, b, c, rows);
    }
    else
    {
        for (int w = 0; w < workers; w++)
        {
            (int first, int count) = Share(w);
            world.Send<double>(a.AsMemory(first * Inner, count * Inner), w + 1, RowsTag); // an array's memory: lent, not copied into the message
        }
        for (int w = 0; w < workers; w++)
        {
            (int first, int count) = Share(w);
            world.Receive<double>(c.AsMemory(first * Columns, count * Columns), w + 1, ResultTag);
        }
    }
    double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
    double checksum = 0;
    foreach (double value in c)
    {
        checksum += value;
    }
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"matmul xcall ranks={world.Size} rows={rows} seconds={seconds:F4} checksum={checksum:F1}"));
}
else
{
    (_, int count) = Share(world.Rank - 1);
    var a = new double[count * Inner];
    world.Receive<double>(a, 0, RowsTag);
    var c = new double[count * Columns];
    Multiply(a, b, c, count);
    world.Send(c, 0, ResultTag);
}
await world.DisposeAsync();

// C (rows x Columns) = A (rows x Inner) x B (Inner x Columns), row by row (i-k-j order, so the inner loop runs along
// rows of B and C). The inner loop adds aik x B's row to C's row a vector of doubles at a time (.NET's JIT does not
// vectorize loops by itself; the C compiler may): the same products and sums as matmul_mpi.c, so the same checksum.
static void Multiply(double[] a, double[] b, double[] c, int rows)
{
    for (int i = 0; i < rows; i++)
    {
        Span<double> row = c.AsSpan(i * Columns, Columns);
        Span<Vector<double>> rowVectors = MemoryMarshal.Cast<double, Vector<double>>(row);
        int tail = rowVectors.Length * Vector<double>.Count;
        for (int k = 0; k < Inner; k++)
        {
            double aik = a[i * Inner + k];
            var aikVector = new Vector<double>(aik);
            ReadOnlySpan<double> bRow = b.AsSpan(k * Columns, Columns);
            ReadOnlySpan<Vector<double>> bVectors = MemoryMarshal.Cast<double, Vector<double>>(bRow);
            for (int v = 0; v < rowVectors.Length; v++)
            {
                rowVectors[v] += aikVector * bVectors[v];
            }
            for (int j = tail; j < Columns; j++)
            {
                row[j] += aik * bRow[j];
            }
        }
    }
}
