using System.Net;
using System.Net.Sockets;
using XCall.Tests.Contracts;

namespace XCall.Tests;

/// <summary>A service whose server dies and comes back: calls fail clearly, then reconnect, and the state changes are observable.</summary>
public sealed class ReconnectTests
{
    [Theory]
    [InlineData("shm")]
    [InlineData("tcp")]
    public async Task Next_call_reconnects_after_the_server_restarts(string transport)
    {
        string name = HostProcess.UniqueName("recon");
        string address = transport == "shm" ? $"shm://{name}" : $"tcp://127.0.0.1:{FreePort()}/{name}";
        var options = new RemoteOptions { ReconnectBackoff = TimeSpan.FromMilliseconds(20), MaxReconnectBackoff = TimeSpan.FromMilliseconds(200) };
        HostProcess first = HostProcess.Start(address, "--no-shm");
        using RemoteService<IShapes> service = Remote.Open<IShapes>(address, options);
        var states = new List<ConnectionState>();
        var lost = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        service.StateChanged += (_, state, error) =>
        {
            lock (states)
            {
                states.Add(state);
            }
            if (state == ConnectionState.Disconnected)
            {
                lost.TrySetResult(error);
            }
        };
        Assert.Equal(2, service.Proxy.Add(1, 1));

        first.Kill();
        first.Dispose();
        await lost.Task.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(ConnectionState.Disconnected, service.State);
        var down = Assert.Throws<XCallDisconnectedException>(() => service.Proxy.Add(1, 2));
        Assert.Contains(transport + "://", down.Endpoint);

        using HostProcess second = HostProcess.Start(address, "--no-shm");
        int result = RetryUntilConnected(() => service.Proxy.Add(2, 3));
        Assert.Equal(5, result);
        Assert.Equal(ConnectionState.Connected, service.State);
        lock (states)
        {
            Assert.Equal([ConnectionState.Disconnected, ConnectionState.Connected], states.Distinct());
        }
    }

    private static int RetryUntilConnected(Func<int> call)
    {
        // The reconnect waits out its backoff; poll the call itself, bounded generously.
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (true)
        {
            try
            {
                return call();
            }
            catch (XCallDisconnectedException) when (DateTime.UtcNow < deadline)
            {
                Thread.Yield();
            }
        }
    }

    private static int FreePort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }
}
