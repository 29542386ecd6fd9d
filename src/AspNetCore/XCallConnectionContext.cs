using System.IO.Pipelines;
using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http.Features;
using XCall.Streams;

namespace XCall.AspNetCore;

/// <summary>One accepted XCall stream as a Kestrel connection.</summary>
internal sealed class XCallConnectionContext : ConnectionContext
{
    private static long s_nextId;
    private readonly XCallStream _stream;
    private readonly CancellationTokenSource _closed = new();

    public XCallConnectionContext(XCallStream stream, EndPoint localEndPoint)
    {
        _stream = stream;
        Transport = stream.AsDuplexPipe();
        ConnectionId = $"xcall-{Interlocked.Increment(ref s_nextId)}";
        LocalEndPoint = localEndPoint;
        RemoteEndPoint = localEndPoint;
        ConnectionClosed = _closed.Token;
    }

    public override string ConnectionId { get; set; }

    public override IFeatureCollection Features { get; } = new FeatureCollection();

    public override IDictionary<object, object?> Items { get; set; } = new Dictionary<object, object?>();

    public override IDuplexPipe Transport { get; set; }

    public override void Abort(ConnectionAbortedException abortReason)
    {
        _stream.Dispose(); // the pending read ends, so Kestrel's connection loop ends
        Close();
    }

    public override async ValueTask DisposeAsync()
    {
        await Transport.Output.CompleteAsync().ConfigureAwait(false);
        await Transport.Input.CompleteAsync().ConfigureAwait(false);
        _stream.Dispose();
        Close();
        _closed.Dispose();
    }

    private void Close()
    {
        try
        {
            _closed.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // Disposed already: the token fired then.
        }
    }
}
