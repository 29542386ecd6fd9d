using Microsoft.Win32.SafeHandles;
using XCall.Transport.Shm.Interop;
using XCall.Transport.Shm.Rendezvous;
using XCall.Transport.Shm.TestHost;
using XCall.Transport.Shm.Tests.Support;

namespace XCall.Transport.Shm.Tests;

/// <summary>A peer that breaks the handshake on purpose: the other side refuses it or shrugs it off, and
/// never maps memory whose size can change under it (an access past the end of a shrunk file is fatal).</summary>
public sealed class HostilePeerTests(ITestOutputHelper output) : IDisposable
{
    private static readonly TimeSpan s_generous = TimeSpan.FromSeconds(60);

    private readonly TestDirectory _dir = new();

    public void Dispose() => _dir.Dispose();

    [Fact]
    public async Task A_client_that_shrinks_its_segment_cannot_crash_the_server()
    {
        using HostProcess server = HostProcess.Start(output, "server", ["server", "victim", "--dir", _dir.Path]);
        await server.WaitForLineAsync("READY");
        using (RawClient attacker = RawClient.Connect(Path.Combine(_dir.Path, "victim.sock")))
        {
            attacker.SendHello();
            (byte status, int capacity, SafeFileHandle? memory) = attacker.ReceiveReply();
            Assert.Equal(Handshake.Accepted, status);
            Assert.NotNull(memory);
            using (var file = new FileStream(memory, FileAccess.ReadWrite))
            {
                // Version 1 sent a path the client could open and truncate; the server then died of SIGBUS
                // (AccessViolationException in RingReader..ctor) at its next touch of the mapping.
                Assert.Throws<UnauthorizedAccessException>(() => file.SetLength(0));
                Assert.Throws<UnauthorizedAccessException>(() => file.SetLength(2 * file.Length));
                Assert.Equal(ShmSegment.LengthFor(capacity), file.Length);
            }
            attacker.Acknowledge();
            await server.WaitForLineAsync("ACCEPTED"); // the server built its channel on that memory
        }
        Assert.Contains(nameof(XCallDisconnectedException), await server.WaitForLineAsync("CLOSED"));

        Assert.False(server.HasExited, "the server died");
        using FrameChannel channel = ShmTransport.Connect("victim", _dir.Options());
        using var client = new EchoClient(channel);
        Assert.Equal([1, 2, 3], client.RoundTrip([1, 2, 3]));
    }

    [Fact]
    public async Task A_server_that_sends_an_unsealed_segment_cannot_crash_the_client()
    {
        const int Capacity = ShmOptions.MinRingSize;
        using var hostile = new HostileServer(_dir.Path, "hostile");
        using ShmSegment segment = ShmSegment.Create("hostile", Capacity, out SafeFileHandle memory, seals: 0);
        using (memory)
        using (HostProcess client = HostProcess.Start(output, "client", ["client", "hostile", "10", "--dir", _dir.Path]))
        {
            bool acknowledged = await hostile.AnswerAsync(Capacity, memory).WaitAsync(s_generous);
            if (acknowledged)
            {
                // The client mapped memory it cannot trust: shrink it under the client's mapping.
                using var file = new FileStream(memory, FileAccess.ReadWrite);
                file.SetLength(0);
            }
            string line = await client.WaitForLineAsync("ERROR");
            Assert.Contains("seals", line);
            Assert.Equal(2, await client.WaitForExitAsync()); // a refused connection, not a crash
            Assert.False(acknowledged, "the client acknowledged an unsealed segment");
        }
    }

    [Theory]
    [InlineData("unsealed", "seals")]
    [InlineData("write-sealed", "seals")]
    [InlineData("larger", "bytes, expected")]
    [InlineData("none", "sent no shared-memory segment")]
    public async Task The_client_refuses_memory_it_cannot_trust(string memoryKind, string reason)
    {
        const int Capacity = ShmOptions.MinRingSize;
        using var hostile = new HostileServer(_dir.Path, "hostile");
        using SafeFileHandle? memory = memoryKind switch
        {
            "unsealed" => ShmSegment.CreateMemory("xcall-hostile", ShmSegment.LengthFor(Capacity), seals: 0),
            "write-sealed" => ShmSegment.CreateMemory("xcall-hostile", ShmSegment.LengthFor(Capacity), ShmSegment.Seals | Libc.SealWrite),
            "larger" => ShmSegment.CreateMemory("xcall-hostile", ShmSegment.LengthFor(2 * Capacity), ShmSegment.Seals),
            _ => null,
        };
        Task<bool> answered = hostile.AnswerAsync(Capacity, memory);

        var ex = await Assert.ThrowsAsync<XCallDisconnectedException>(() => ShmTransport.ConnectAsync("hostile", _dir.Options()));
        output.WriteLine(ex.Message);
        Assert.Contains(reason, ex.Message);
        Assert.False(await answered.WaitAsync(s_generous), "the client acknowledged");
        Assert.Equal(0, SegmentMemory.HoldersOf("hostile") - (memory is null ? 0 : 1)); // nothing received is kept
    }
}
