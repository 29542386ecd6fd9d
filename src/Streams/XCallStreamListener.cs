using XCall.Transport;

namespace XCall.Streams;

/// <summary>Accepts byte streams on a <c>shm://</c> or <c>tcp://</c> address (<see cref="XCallStreams.Listen"/>).</summary>
public sealed class XCallStreamListener : IDisposable
{
    private readonly IDisposable _listener;
    private readonly Func<CancellationToken, ValueTask<FrameChannel>> _accept;
    private readonly int _receiveWindow;

    internal XCallStreamListener(IDisposable listener, Func<CancellationToken, ValueTask<FrameChannel>> accept, XCallAddress address, int receiveWindow)
    {
        _listener = listener;
        _accept = accept;
        _receiveWindow = receiveWindow;
        Address = address;
    }

    /// <summary>The address listened on, a TCP port asked as 0 filled in.</summary>
    public XCallAddress Address { get; }

    /// <summary>Waits for the next peer and returns the stream to it.</summary>
    /// <exception cref="ObjectDisposedException">The listener was disposed.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired.</exception>
    public async ValueTask<XCallStream> AcceptAsync(CancellationToken cancellationToken = default)
    {
        FrameChannel channel = await _accept(cancellationToken).ConfigureAwait(false);
        return new XCallStream(channel, _receiveWindow);
    }

    /// <summary>Stops listening (and removes a shared-memory rendezvous socket); accepted streams stay open.</summary>
    public void Dispose() => _listener.Dispose();
}
