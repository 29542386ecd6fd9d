using System.Net;
using System.Threading.Channels;
using XCall.Transport.Tcp.TestHost;

namespace XCall.Transport.Tcp.Tests.Support;

/// <summary>A loopback listener whose every accepted channel echoes calls (<see cref="EchoHandler"/>).</summary>
internal sealed class EchoServer : IDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private readonly Channel<EchoHandler> _accepted = Channel.CreateUnbounded<EchoHandler>();
    private readonly Channel<(string Peer, Exception Error)> _failures = Channel.CreateUnbounded<(string, Exception)>();
    private readonly List<FrameChannel> _channels = [];
    private readonly Task _acceptLoop;

    public EchoServer(TcpOptions? options = null)
    {
        Listener = TcpTransport.Listen(new IPEndPoint(IPAddress.Loopback, 0), options);
        Listener.HandshakeFailed += (peer, error) => _failures.Writer.TryWrite((peer, error));
        _acceptLoop = Task.Run(AcceptLoop);
    }

    public TcpChannelListener Listener { get; }

    public int Port => Listener.LocalEndpoint.Port;

    /// <summary>The handler of the next accepted channel.</summary>
    public Task<EchoHandler> NextAcceptedAsync() => _accepted.Reader.ReadAsync().AsTask().WaitAsync(Timeouts.Long);

    /// <summary>Handshake failures reported and not yet taken by <see cref="NextHandshakeFailureAsync"/>.</summary>
    public int HandshakeFailureCount => _failures.Reader.Count;

    /// <summary>The next handshake failure the listener reported.</summary>
    public Task<(string Peer, Exception Error)> NextHandshakeFailureAsync() => _failures.Reader.ReadAsync().AsTask().WaitAsync(Timeouts.Long);

    private async Task AcceptLoop()
    {
        while (!_stop.IsCancellationRequested)
        {
            FrameChannel channel;
            try
            {
                channel = await Listener.AcceptAsync(_stop.Token);
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException)
            {
                return;
            }
            lock (_channels)
            {
                _channels.Add(channel);
            }
            var handler = new EchoHandler(channel);
            channel.Start(handler);
            _accepted.Writer.TryWrite(handler);
        }
    }

    public void Dispose()
    {
        _stop.Cancel();
        Listener.Dispose();
        _acceptLoop.Wait(Timeouts.Long);
        lock (_channels)
        {
            foreach (FrameChannel channel in _channels)
            {
                channel.Dispose();
            }
        }
    }
}
