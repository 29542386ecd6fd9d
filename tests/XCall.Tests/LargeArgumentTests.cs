using System.Diagnostics.Metrics;
using XCall.Diagnostics;
using XCall.Tests.Contracts;
using XCall.Transport.Shm;

namespace XCall.Tests;

/// <summary>
/// Arguments far larger than the shared-memory ring: through the ring in chunks, or, where the peer can read the
/// caller's memory, lent (<see cref="ShmOptions.CrossMemoryAttach"/>) and copied once, straight out of the caller.
/// </summary>
public sealed class LargeArgumentTests
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_256_MiB_array_passes_through_a_1_MiB_ring_both_ways(bool lend)
    {
        string address = $"shm://{HostProcess.UniqueName("big")}";
        using HostProcess host = HostProcess.Start(address);
        var options = new RemoteOptions { Shm = new ShmOptions { CrossMemoryAttach = lend } };
        using var lent = new LentBytes(address);
        using RemoteService<IShapes> service = Remote.Open<IShapes>(address, options);
        byte[] data = GC.AllocateUninitializedArray<byte>(256 << 20);
        new Random(7).NextBytes(data);
        byte[] reversed = service.Proxy.Reverse(data)!;
        Assert.Equal(data.Length, reversed.Length);
        for (int i = 0; i < data.Length; i += 4093)
        {
            Assert.Equal(data[i], reversed[data.Length - 1 - i]);
        }
        Assert.Equal(data[^1], reversed[0]);
        Assert.Equal(3, service.Proxy.Add(1, 2));

        // The argument was lent, or went through the ring; the result always comes back through the ring.
        Assert.Equal(lend ? data.Length : 0, lent.Total);
    }

    /// <summary>The <c>xcall.lent.bytes</c> counter of one endpoint, from this process.</summary>
    private sealed class LentBytes : IDisposable
    {
        private readonly MeterListener _listener = new();
        private long _total;

        public LentBytes(string endpoint)
        {
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == XCallMetrics.MeterName && instrument.Name == "xcall.lent.bytes")
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
            {
                foreach (KeyValuePair<string, object?> tag in tags)
                {
                    if (tag.Key == "endpoint" && (string?)tag.Value == endpoint)
                    {
                        Interlocked.Add(ref _total, value);
                    }
                }
            });
            _listener.Start();
        }

        public long Total => Interlocked.Read(ref _total);

        public void Dispose() => _listener.Dispose();
    }
}
