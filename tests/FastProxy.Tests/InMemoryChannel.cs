using System.Buffers;
using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using XCall.Marshal;
using XCall.Transport;

namespace XCall.FastProxy.Tests;

/// <summary>
/// A frame channel pair inside one process, with a receive thread per side like the real transports:
/// it tests the framed proxies and dispatchers without operating-system machinery.
/// </summary>
internal sealed class InMemoryChannel : FrameChannel
{
    private readonly object _sendLock = new();
    private readonly ArrayBufferWriter<byte> _frame = new();
    private readonly BlockingCollection<byte[]> _inbox = new();
    private InMemoryChannel _peer = null!;
    private IFrameHandler? _handler;
    private Thread? _receiver;
    private volatile bool _closed;

    private InMemoryChannel(string name) => RemoteEndpoint = name;

    public override string RemoteEndpoint { get; }

    public static (InMemoryChannel Client, InMemoryChannel Server) CreatePair(string name = "server")
    {
        var client = new InMemoryChannel($"mem://{name}");
        var server = new InMemoryChannel($"mem://{name}-client");
        client._peer = server;
        server._peer = client;
        return (client, server);
    }

    public override void Start(IFrameHandler handler)
    {
        _handler = handler;
        _receiver = new Thread(Receive) { IsBackground = true, Name = "mem-receive" };
        _receiver.Start();
    }

    public override IBufferWriter<byte> BeginFrame(in FrameHeader header)
    {
        Monitor.Enter(_sendLock);
        if (_closed)
        {
            Monitor.Exit(_sendLock);
            throw new XCallDisconnectedException(RemoteEndpoint, "closed");
        }
        _frame.ResetWrittenCount();
        FrameHeader copy = header;
        _frame.Write(MemoryMarshal.AsBytes(new ReadOnlySpan<FrameHeader>(in copy)));
        return _frame;
    }

    public override void CommitFrame()
    {
        try
        {
            if (!_peer._closed)
            {
                _peer._inbox.Add(_frame.WrittenSpan.ToArray());
            }
        }
        finally
        {
            Monitor.Exit(_sendLock);
        }
    }

    public override void AbortFrame() => Monitor.Exit(_sendLock);

    /// <summary>Delivers raw bytes to the peer as if they were a frame (for malformed-input tests).</summary>
    public void InjectRaw(byte[] frame) => _peer._inbox.Add(frame);

    private void Receive()
    {
        Exception? error = null;
        try
        {
            foreach (byte[] frame in _inbox.GetConsumingEnumerable())
            {
                if (frame.Length < FrameHeader.Size)
                {
                    throw new XCallProtocolException("Frame shorter than its header.");
                }
                FrameHeader header = MemoryMarshal.Read<FrameHeader>(frame);
                var reader = new MarshalReader(frame.AsSpan(FrameHeader.Size), _handler!.Limits);
                _handler.OnFrame(header, ref reader);
            }
        }
        catch (Exception ex)
        {
            error = ex;
        }
        Shutdown(error);
    }

    private void Shutdown(Exception? error)
    {
        lock (_sendLock)
        {
            if (_closed)
            {
                return;
            }
            _closed = true;
        }
        _inbox.CompleteAdding();
        _handler?.OnClosed(error);
        _peer.Dispose();
    }

    public override void Dispose()
    {
        if (!_closed)
        {
            Shutdown(new XCallDisconnectedException(RemoteEndpoint, "the peer closed the connection"));
        }
    }
}
