namespace XCall.Chaos;

/// <summary>What the chaos, load and soak runs call.</summary>
[Remotable]
public interface ILedger
{
    /// <summary>Writes <paramref name="id"/> to the ledger file (a write system call, so it outlives a kill -9 of
    /// this process) before it returns it: a call that returned is an effect that must be in the file.</summary>
    long Append(long id);

    /// <summary>A checked call: the caller knows the answer.</summary>
    long Mix(long a, long b);

    /// <summary>A large call: the length of what arrived and its last byte.</summary>
    (int Length, byte Last) Measure(byte[] data);

    /// <summary>This process's live heap after a full, compacting collection, in bytes.</summary>
    long LiveHeapBytes();
}

public sealed class Ledger(string path) : ILedger
{
    private readonly object _lock = new();
    private readonly FileStream _file = new(path, FileMode.Append, FileAccess.Write, FileShare.Read, bufferSize: 0);

    public long Append(long id)
    {
        byte[] line = System.Text.Encoding.ASCII.GetBytes($"{id}\n");
        lock (_lock)
        {
            _file.Write(line);
        }
        return id;
    }

    public long Mix(long a, long b) => Expected(a, b);

    public (int Length, byte Last) Measure(byte[] data) => (data.Length, data.Length == 0 ? (byte)0 : data[^1]);

    public long LiveHeapBytes()
    {
        System.Runtime.GCSettings.LargeObjectHeapCompactionMode = System.Runtime.GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect();
        GC.WaitForPendingFinalizers();
        return GC.GetTotalMemory(forceFullCollection: true);
    }

    public static long Expected(long a, long b) => unchecked((a * (long)0x9E3779B97F4A7C15UL) ^ b);
}
