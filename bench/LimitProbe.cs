using System.Diagnostics;
using System.Globalization;
using System.IO.MemoryMappedFiles;
using System.Net;
using System.Net.Sockets;

namespace XCall.Bench;

/// <summary>
/// Measures this machine's round-trip limits between two processes in the same run as the benchmark:
/// shared-memory busy polling (<c>limit-spin</c>), loopback TCP with blocking reads (<c>limit-tcp</c>) and loopback
/// TCP with busy polling, non-blocking reads in a loop (<c>limit-tcp-spin</c>). Uses the C probe in
/// Probes/limit_probe.c when a C compiler is present, else the same protocol in C# (two processes of this
/// program). Never needs anything outside the repository.
/// </summary>
internal static class LimitProbe
{
    public sealed record Limit(string Mode, int Bytes, double BestNs, double MedianNs, string Implementation);

    /// <summary>Runs the probe for <paramref name="mode"/> ("spin", "tcp" or "tcp-spin") at the given payload sizes.</summary>
    public static IReadOnlyList<Limit> Measure(string mode, int[] sizes, long rounds, bool forceManaged = false)
    {
        string? native = forceManaged ? null : CompileNative();
        var limits = new List<Limit>();
        foreach (int bytes in sizes)
        {
            Limit? limit = native is not null ? RunNative(native, mode, bytes, rounds) : null;
            limits.Add(limit ?? RunManaged(mode, bytes, rounds));
        }
        return limits;
    }

    /// <summary>
    /// The floors of a large one-way transfer between two processes, C probe only (null without a C compiler, or
    /// where the kernel refuses <c>process_vm_readv</c>): <c>copy</c> copies into shared memory and out again,
    /// as a large argument over a ring is; <c>cma</c> copies once, across the processes, as Open MPI does.
    /// </summary>
    public static Limit? MeasureBulk(string mode, int bytes, long rounds) =>
        CompileNative() is { } native ? RunNative(native, mode, bytes, rounds) : null;

    private static string? CompileNative()
    {
        string source = Path.Combine(AppContext.BaseDirectory, "Probes", "limit_probe.c");
        if (!File.Exists(source))
        {
            return null;
        }
        foreach (string compiler in new[] { "cc", "gcc", "clang" })
        {
            string output = Path.Combine(Path.GetTempPath(), $"xcall-limit-probe-{File.GetLastWriteTimeUtc(source).Ticks}");
            if (File.Exists(output))
            {
                return output;
            }
            try
            {
                using Process? p = Process.Start(new ProcessStartInfo(compiler, ["-O2", "-o", output, source]) { RedirectStandardError = true, RedirectStandardOutput = true });
                if (p is null)
                {
                    continue;
                }
                p.WaitForExit();
                if (p.ExitCode == 0 && File.Exists(output))
                {
                    return output;
                }
            }
            catch (System.ComponentModel.Win32Exception)
            {
                // This compiler is not installed; try the next, then fall back to C#.
            }
        }
        return null;
    }

    private static Limit? RunNative(string probe, string mode, int bytes, long rounds)
    {
        using Process p = Process.Start(new ProcessStartInfo(probe, [mode, bytes.ToString(CultureInfo.InvariantCulture), rounds.ToString(CultureInfo.InvariantCulture)]) { RedirectStandardOutput = true })!;
        string output = p.StandardOutput.ReadToEnd();
        p.WaitForExit();
        string[] f = output.Trim().Split(' ');
        return p.ExitCode == 0 && f.Length == 5 && f[0] == "limit"
            ? new Limit(mode, bytes, double.Parse(f[3], CultureInfo.InvariantCulture), double.Parse(f[4], CultureInfo.InvariantCulture), "C")
            : null;
    }

    // ------------------------------------------------------------------ C# fallback

    private const int Batches = 5;
    private const int AskOffset = 0;
    private const int AnswerOffset = 128;
    private const int InOffset = 256;

    private static Limit RunManaged(string mode, int bytes, long rounds)
    {
        double[] ns = mode == "spin" ? SpinParent(bytes, rounds) : TcpParent(mode, bytes, rounds);
        Array.Sort(ns);
        return new Limit(mode, bytes, ns[0], ns[Batches / 2], "C#");
    }

    /// <summary>Entry point of the child process: <c>--probe-child spin|tcp|tcp-spin ARG BYTES ROUNDS</c>.</summary>
    public static int Child(string[] args)
    {
        int bytes = int.Parse(args[3], CultureInfo.InvariantCulture);
        long total = long.Parse(args[4], CultureInfo.InvariantCulture) * Batches;
        if (args[1] == "spin")
        {
            using var map = MemoryMappedFile.CreateFromFile(args[2], FileMode.Open, null, 0, MemoryMappedFileAccess.ReadWrite);
            using MemoryMappedViewAccessor view = map.CreateViewAccessor();
            unsafe
            {
                byte* page = null;
                view.SafeMemoryMappedViewHandle.AcquirePointer(ref page);
                byte* input = page + InOffset;
                byte* output = input + 65536;
                for (long seq = 1; seq <= total; seq++)
                {
                    while (Volatile.Read(ref *(long*)(page + AskOffset)) != seq)
                    {
                        Thread.SpinWait(1);
                    }
                    Buffer.MemoryCopy(input, output, bytes, bytes);
                    Volatile.Write(ref *(long*)(page + AnswerOffset), seq);
                }
                view.SafeMemoryMappedViewHandle.ReleasePointer();
            }
            return 0;
        }
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        socket.Connect(IPAddress.Loopback, int.Parse(args[2], CultureInfo.InvariantCulture));
        socket.Blocking = args[1] != "tcp-spin";
        byte[] buffer = new byte[bytes];
        for (long i = 0; i < total; i++)
        {
            ReadFull(socket, buffer);
            SendFull(socket, buffer);
        }
        return 0;
    }

    private static unsafe double[] SpinParent(int bytes, long rounds)
    {
        string file = Path.Combine(Directory.Exists("/dev/shm") ? "/dev/shm" : Path.GetTempPath(), $"xcall-probe-{Environment.ProcessId}");
        using (var f = new FileStream(file, FileMode.Create, FileAccess.ReadWrite))
        {
            f.SetLength(InOffset + (2 * 65536));
        }
        try
        {
            using var map = MemoryMappedFile.CreateFromFile(file, FileMode.Open, null, 0, MemoryMappedFileAccess.ReadWrite);
            using MemoryMappedViewAccessor view = map.CreateViewAccessor();
            byte* page = null;
            view.SafeMemoryMappedViewHandle.AcquirePointer(ref page);
            try
            {
                using Process child = StartChild("spin", file, bytes, rounds);
                byte* input = page + InOffset;
                byte* output = input + 65536;
                byte[] local = new byte[bytes];
                var ns = new double[Batches];
                long seq = 0;
                fixed (byte* l = local)
                {
                    for (int b = 0; b < Batches; b++)
                    {
                        long start = Stopwatch.GetTimestamp();
                        for (long i = 0; i < rounds; i++)
                        {
                            seq++;
                            Buffer.MemoryCopy(l, input, bytes, bytes);
                            Volatile.Write(ref *(long*)(page + AskOffset), seq);
                            while (Volatile.Read(ref *(long*)(page + AnswerOffset)) != seq)
                            {
                                Thread.SpinWait(1);
                            }
                            Buffer.MemoryCopy(output, l, bytes, bytes);
                        }
                        ns[b] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / rounds;
                    }
                }
                child.WaitForExit();
                return ns;
            }
            finally
            {
                view.SafeMemoryMappedViewHandle.ReleasePointer();
            }
        }
        finally
        {
            File.Delete(file);
        }
    }

    private static double[] TcpParent(string mode, int bytes, long rounds)
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        int port = ((IPEndPoint)listener.LocalEndPoint!).Port;
        using Process child = StartChild(mode, port.ToString(CultureInfo.InvariantCulture), bytes, rounds);
        using Socket socket = listener.Accept();
        socket.NoDelay = true;
        socket.Blocking = mode != "tcp-spin";
        byte[] buffer = new byte[bytes];
        var ns = new double[Batches];
        for (int b = 0; b < Batches; b++)
        {
            long start = Stopwatch.GetTimestamp();
            for (long i = 0; i < rounds; i++)
            {
                SendFull(socket, buffer);
                ReadFull(socket, buffer);
            }
            ns[b] = Stopwatch.GetElapsedTime(start).TotalNanoseconds / rounds;
        }
        child.WaitForExit();
        return ns;
    }

    private static Process StartChild(string mode, string arg, int bytes, long rounds)
    {
        string self = typeof(LimitProbe).Assembly.Location;
        return Process.Start(new ProcessStartInfo("dotnet", [self, "--probe-child", mode, arg, bytes.ToString(CultureInfo.InvariantCulture), rounds.ToString(CultureInfo.InvariantCulture)]))!;
    }

    /// <summary>
    /// Reads the whole buffer. On a blocking socket each receive sleeps until data arrives; on a non-blocking one
    /// (<c>tcp-spin</c>) it returns <see cref="SocketError.WouldBlock"/> at once and the loop asks again.
    /// </summary>
    private static void ReadFull(Socket socket, byte[] buffer)
    {
        for (int got = 0; got < buffer.Length;)
        {
            int n = socket.Receive(buffer, got, buffer.Length - got, SocketFlags.None, out SocketError error);
            if (error == SocketError.WouldBlock)
            {
                continue;
            }
            if (error != SocketError.Success || n == 0)
            {
                throw new IOException($"The probe's peer closed the socket ({error}).");
            }
            got += n;
        }
    }

    private static void SendFull(Socket socket, byte[] buffer)
    {
        for (int sent = 0; sent < buffer.Length;)
        {
            int n = socket.Send(buffer, sent, buffer.Length - sent, SocketFlags.None, out SocketError error);
            if (error is not (SocketError.Success or SocketError.WouldBlock))
            {
                throw new IOException($"The probe could not send ({error}).");
            }
            sent += n;
        }
    }
}
