using System.Globalization;
using XCall.Transport.Shm;

namespace XCall.Chaos;

/// <summary>
/// `heap MIB`: one call with a MIB-sized argument to a fresh server over shm, lent (the default) and streamed
/// through the ring as one large frame (<see cref="ShmOptions.CrossMemoryAttach"/> off); the connection closes,
/// and 5 s later the server's live heap after a full GC must be within 64 MiB of what it was before the call.
/// Prints one line per mode and a summary line ending in PASS or FAIL.
/// </summary>
public static class HeapRun
{
    private const long Allowed = 64L << 20;
    private static readonly TimeSpan Settle = TimeSpan.FromSeconds(5);

    public static int Run(int mib)
    {
        byte[] data = GC.AllocateUninitializedArray<byte>(checked(mib << 20));
        data[^1] = 7;
        bool pass = true;
        foreach (bool lent in new[] { true, false })
        {
            string name = $"heap-{Environment.ProcessId}-{(lent ? "lent" : "frame")}";
            string ledger = Path.Combine(Path.GetTempPath(), name + ".ledger");
            using (var server = new Child("serve", name, ledger))
            {
                _ = server.WaitLine("READY", TimeSpan.FromSeconds(60)) ?? throw new InvalidOperationException("the server did not start");
                using RemoteService<ILedger> probe = Caller.Open($"shm://{name}", "shm");
                Check(probe.Proxy.Measure([1, 2, 3]), 3, 3); // the call path warmed up at its small size
                long start = probe.Proxy.LiveHeapBytes();
                var options = new RemoteOptions { Reconnect = false, Shm = new ShmOptions { CrossMemoryAttach = lent } };
                using (RemoteService<ILedger> large = Remote.Open<ILedger>($"shm://{name}", options))
                {
                    Check(large.Proxy.Measure(data), data.Length, 7);
                }
                Thread.Sleep(Settle); // the issue's figure is the heap this long after the connection closed
                long after = probe.Proxy.LiveHeapBytes();
                bool ok = after - start <= Allowed;
                pass &= ok;
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  shm {(lent ? "lent (default)" : "one streamed frame")}, {mib} MiB: live heap {start / 1048576.0:0.0} MiB before, {after / 1048576.0:0.0} MiB {Settle.TotalSeconds:0} s after the connection closed ({(ok ? "within" : "over")} 64 MiB)"));
            }
            File.Delete(ledger);
        }
        Console.WriteLine($"heap: {mib} MiB argument over shm, the server's live heap 5 s after: {(pass ? "PASS" : "FAIL")}");
        return pass ? 0 : 1;
    }

    private static void Check((int Length, byte Last) measured, int length, byte last)
    {
        if (measured != (length, last))
        {
            throw new InvalidOperationException($"the server measured {measured}, expected ({length}, {last})");
        }
    }
}
