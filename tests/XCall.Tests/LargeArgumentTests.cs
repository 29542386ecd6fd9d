using XCall.Tests.Contracts;

namespace XCall.Tests;

/// <summary>Arguments far larger than the shared-memory ring stream through it in chunks.</summary>
public sealed class LargeArgumentTests
{
    [Fact]
    public void A_256_MiB_array_passes_through_a_1_MiB_ring_both_ways()
    {
        string address = $"shm://{HostProcess.UniqueName("big")}";
        using HostProcess host = HostProcess.Start(address);
        using RemoteService<IShapes> service = Remote.Open<IShapes>(address);
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
    }
}
