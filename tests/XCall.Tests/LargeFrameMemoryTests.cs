using XCall.Tests.Contracts;
using XCall.Transport.Shm;
using Xunit.Abstractions;

namespace XCall.Tests;

/// <summary>
/// A large call leaves no buffer behind: the server's frame, argument and send buffers of a large call go
/// back to the GC once it is done, instead of staying in the shared array pool for the process's life (or
/// until the pool trims them, about a minute later). Measured as the host's live heap after a full GC.
/// </summary>
public sealed class LargeFrameMemoryTests(ITestOutputHelper output)
{
    private const long Allowed = 64L << 20;

    [Theory]
    [InlineData("shm", 128 << 20)]
    [InlineData("tcp", 48 << 20)] // under TcpOptions.MaxFrameSize (64 MiB)
    public void The_server_keeps_no_buffer_of_a_large_call_after_it(string transport, int size)
    {
        string name = HostProcess.UniqueName("heap");
        string address = transport == "shm" ? $"shm://{name}" : $"tcp://127.0.0.1:0/{name}";
        using HostProcess host = HostProcess.Start(address, "--no-shm");
        using RemoteService<IProbe> probe = Remote.Open<IProbe>(host.Address);
        byte[] data = GC.AllocateUninitializedArray<byte>(size);
        data[0] = 1;
        data[^1] = 2;
        long before;
        // Not lent (ShmOptions.CrossMemoryAttach): the argument streams through the ring, and the server gathers it.
        var options = new RemoteOptions { Shm = new ShmOptions { CrossMemoryAttach = false } };
        using (RemoteService<IShapes> shapes = Remote.Open<IShapes>(host.Address, options))
        {
            Assert.Equal([3, 2, 1], shapes.Proxy.Reverse([1, 2, 3])); // the call path warmed up at its small size
            before = probe.Proxy.LiveHeapBytes();
            byte[] reversed = shapes.Proxy.Reverse(data)!;
            Assert.Equal((2, 1, size), (reversed[0], reversed[^1], reversed.Length));
        }

        long after = LiveHeapAfter(probe.Proxy, before);
        output.WriteLine($"{transport}, {size >> 20} MiB call: the server's live heap after a full GC went {before:N0} -> {after:N0} bytes");
        Assert.True(after - before < Allowed,
            $"the {transport} server's live heap grew by {(after - before) / (1 << 20)} MiB over a {size >> 20} MiB call ({before:N0} -> {after:N0} bytes)");
    }

    [Theory]
    [InlineData(true)] // lent by the caller (the default over shm): the callee's span is a copy
    [InlineData(false)] // streamed through the ring: the values are split across chunks, so copied
    public void The_server_keeps_no_copy_of_a_large_span_argument_after_it(bool crossMemoryAttach)
    {
        const int count = 32 << 20; // 128 MiB of ints
        using HostProcess host = HostProcess.Start($"shm://{HostProcess.UniqueName("span")}", "--no-shm");
        using RemoteService<IProbe> probe = Remote.Open<IProbe>(host.Address);
        int[] values = GC.AllocateUninitializedArray<int>(count);
        values.AsSpan().Fill(3);
        values[^1] = 5;
        long before;
        var options = new RemoteOptions { Shm = new ShmOptions { CrossMemoryAttach = crossMemoryAttach } };
        using (RemoteService<IShapes> shapes = Remote.Open<IShapes>(host.Address, options))
        {
            Assert.Equal(6, shapes.Proxy.Sum([1, 2, 3])); // the call path warmed up at its small size
            before = probe.Proxy.LiveHeapBytes();
            Assert.Equal(unchecked((3 * (count - 1)) + 5), shapes.Proxy.Sum(values));
        }

        long after = LiveHeapAfter(probe.Proxy, before);
        output.WriteLine($"shm, 128 MiB span argument (lent: {crossMemoryAttach}): the server's live heap after a full GC went {before:N0} -> {after:N0} bytes");
        Assert.True(after - before < Allowed,
            $"the server's live heap grew by {(after - before) / (1 << 20)} MiB over a 128 MiB span argument ({before:N0} -> {after:N0} bytes)");
    }

    /// <summary>
    /// The server's live heap once the large call has left it. Its reply reaches us before the server's pool thread
    /// leaves the dispatch (and gives back the frame's buffer there), so on a busy machine the first full collection
    /// can still see that thread holding it. Each measurement is a full compacting collection in the server, long
    /// enough for that thread to finish; a buffer really kept stays through every one of them.
    /// </summary>
    private long LiveHeapAfter(IProbe probe, long before)
    {
        long after = probe.LiveHeapBytes();
        for (int attempt = 1; attempt < 5 && after - before >= Allowed; attempt++)
        {
            output.WriteLine($"measurement {attempt}: {after:N0} bytes, measured again");
            after = probe.LiveHeapBytes();
        }
        return after;
    }
}
