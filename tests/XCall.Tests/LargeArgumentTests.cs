using XCall.Runtime;
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
        using var served = new Served("big", lend);
        (RemoteService<IShapes> service, LentBytes lent) = (served.Service, served.Lent);
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

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_lent_span_of_an_array_is_copied_straight_into_the_callees_buffer(bool lend)
    {
        using var served = new Served("lent", lend);
        (RemoteService<IShapes> service, LentBytes lent) = (served.Service, served.Lent);
        byte[] data = new byte[(1 << 20) + 100];
        new Random(3).NextBytes(data);

        Assert.Equal(Shapes.Hash(data), service.Proxy.Checksum(data));
        Assert.Equal(Shapes.Hash(data.AsSpan(100)), service.Proxy.Checksum(new LentSpan<byte>(data, 100, 1 << 20)));
        Assert.Equal(lend ? data.Length + (1 << 20) : 0, lent.Total);

        // A span that is not an array's is never lent: nothing pins it past the call.
        Assert.Equal(Shapes.Hash(data.AsSpan(0, 50_000)), service.Proxy.Checksum(data.AsSpan(0, 50_000)));
        Assert.Equal(lend ? data.Length + (1 << 20) : 0, lent.Total);
    }

    [Fact]
    public void A_caller_that_stopped_waiting_has_its_array_back_before_the_callee_reads_it()
    {
        using var served = new Served("late", lend: true, new ConnectionOptions { CallTimeout = TimeSpan.FromSeconds(1) });
        IShapes proxy = served.Service.Proxy;
        byte[] data = new byte[1 << 20];
        Array.Fill(data, (byte)1);

        Assert.Throws<XCallTimeoutException>(() => proxy.ChecksumWhenReleased(data)); // the callee holds on
        Assert.Equal(data.Length, served.Lent.Total);
        Array.Fill(data, (byte)2); // the caller's array is its own again: whatever it writes, the callee must not see
        proxy.ReleaseChecksum();

        // The late read finds the loan taken back: reading the 2s would pass the caller's later writes off as sent.
        Assert.Contains("took back", proxy.AwaitChecksumOutcome());
    }

    /// <summary>A server process at a fresh shm address, a service on it lending or not, and its lent-bytes counter.</summary>
    private sealed class Served : IDisposable
    {
        private readonly HostProcess _host;

        public Served(string prefix, bool lend, ConnectionOptions? connection = null)
        {
            string address = $"shm://{HostProcess.UniqueName(prefix)}";
            _host = HostProcess.Start(address);
            Lent = new LentBytes(address);
            Service = Remote.Open<IShapes>(address, new RemoteOptions { Shm = new ShmOptions { CrossMemoryAttach = lend }, Connection = connection ?? ConnectionOptions.Default });
        }

        public RemoteService<IShapes> Service { get; }

        public LentBytes Lent { get; }

        public void Dispose()
        {
            Service.Dispose();
            Lent.Dispose();
            _host.Dispose();
        }
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
