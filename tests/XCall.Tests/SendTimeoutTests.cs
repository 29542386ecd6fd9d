using System.Diagnostics;
using XCall.Tests.Contracts;

namespace XCall.Tests;

/// <summary>
/// <see cref="ConnectionOptions.CallTimeout"/> bounds the sending of a call too: a server process that stops
/// reading (its only receive thread stuck in an inline method) must not hold a caller whose argument does not
/// fit in the transport's buffers forever.
/// </summary>
public sealed class SendTimeoutTests
{
    [Theory]
    [InlineData("shm", 4 << 20)] // four times the default 1 MiB ring
    [InlineData("tcp", 32 << 20)] // more than the sockets' buffers take
    public async Task A_call_whose_argument_the_peer_never_takes_times_out_and_nothing_hangs(string transport, int size)
    {
        string name = HostProcess.UniqueName("sendtimeout");
        string address = transport == "shm" ? $"shm://{name}" : $"tcp://127.0.0.1:0/{name}";
        using HostProcess host = HostProcess.Start(address, "--inline", "--no-shm");
        var options = new RemoteOptions { Connection = new ConnectionOptions { CallTimeout = TimeSpan.FromSeconds(2) } };
        using RemoteService<IShapes> service = Remote.Open<IShapes>(host.Address, options);
        Assert.Equal(3, service.Proxy.Add(1, 2));
        // The server's receive thread runs this inline and never reads again (the cancel frame waits behind it).
        await Assert.ThrowsAsync<XCallTimeoutException>(() => Task.Run(() => service.Proxy.WaitForCancel(CancellationToken.None)));

        var clock = Stopwatch.StartNew();
        Task big = Task.Run(() => service.Proxy.Reverse(new byte[size]));
        Task first = await Task.WhenAny(big, Task.Delay(TimeSpan.FromSeconds(60)));
        Assert.True(first == big, $"the {size}-byte call still runs after {clock.Elapsed} (CallTimeout 2 s)");
        var timedOut = await Assert.ThrowsAsync<XCallTimeoutException>(() => big);
        Assert.Contains(transport + "://", timedOut.Message);

        if (transport == "shm")
        {
            // Nothing of the frame reached the ring (the reader had not even taken the frames before it): the
            // frame was dropped whole, the connection stays, and the still stuck server times the next call out.
            Assert.Throws<XCallTimeoutException>(() => service.Proxy.Add(2, 3));
        }
        else
        {
            // Part of the frame was on the wire: that link closed, and the service reconnects to the same
            // (still running) server process, whose new connection has a receive thread of its own.
            Assert.Equal(5, service.Proxy.Add(2, 3));
        }
    }

    [Fact]
    public async Task A_frame_cut_off_in_the_ring_by_a_stopped_peer_times_out_closes_the_link_and_the_service_reconnects()
    {
        string address = $"shm://{HostProcess.UniqueName("sendtimeout")}";
        using HostProcess host = HostProcess.Start(address);
        var options = new RemoteOptions
        {
            Connection = new ConnectionOptions { CallTimeout = TimeSpan.FromSeconds(2) },
            Shm = new Transport.Shm.ShmOptions { CrossMemoryAttach = false }, // the array goes through the ring, not lent
        };
        using RemoteService<IShapes> service = Remote.Open<IShapes>(host.Address, options);
        Assert.Equal(3, service.Proxy.Add(1, 2));

        host.Signal("STOP"); // alive (its socket open), but it reads nothing any more
        Task big;
        try
        {
            // The ring is empty, so the 4 MiB frame starts streaming through the 1 MiB ring, and fills it.
            big = Task.Run(() => service.Proxy.Reverse(new byte[4 << 20]));
            Task first = await Task.WhenAny(big, Task.Delay(TimeSpan.FromSeconds(60)));
            Assert.True(first == big, "the call still runs a minute after it began (CallTimeout 2 s)");
        }
        finally
        {
            host.Signal("CONT");
        }
        var timedOut = await Assert.ThrowsAsync<XCallTimeoutException>(() => big);
        Assert.Contains("middle of a frame", timedOut.Message);

        // That link is closed (nothing can follow half a frame); the next call reconnects.
        Assert.Equal(5, service.Proxy.Add(2, 3));
    }
}
