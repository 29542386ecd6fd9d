using System.Buffers;
using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using XCall.Marshal;
using XCall.Transport;

namespace XCall.Tests.Contracts;

/// <summary>
/// A frame channel pair inside one process, with a receive thread per side like the real transports, so
/// framed calls (and their diagnostics) run without operating-system machinery.
/// </summary>
/// <remarks>
/// Each frame is copied into its own array (header first) and handed to the peer's inbox; the peer's
/// receive thread parses the header and gives the payload to its handler. Shared by the framed tests
/// (FastProxy.Tests, Profile.Tests) and the profiler's test application.
/// </remarks>
public sealed class InMemoryChannel : FrameChannel
{
    private readonly object _sendLock = new();
    private int _batchedCommits;
    private int _lastCommitThread;
    private readonly ArrayBufferWriter<byte> _frame = new();
    private readonly BlockingCollection<byte[]> _inbox = new();
    private InMemoryChannel _peer = null!;
    private IFrameHandler? _handler;
    private volatile bool _closed;
    private bool _frameOpen; // under _sendLock

    private InMemoryChannel(string remoteEndpoint) => RemoteEndpoint = remoteEndpoint;

    /// <inheritdoc />
    public override string RemoteEndpoint { get; }

    /// <summary>
    /// Creates two connected channels; <paramref name="name"/> makes their endpoints
    /// (<c>mem://name/server</c> seen by the client, <c>mem://name/client</c> seen by the server).
    /// </summary>
    public static (InMemoryChannel Client, InMemoryChannel Server) CreatePair(string name = "test")
    {
        var client = new InMemoryChannel($"mem://{name}/server");
        var server = new InMemoryChannel($"mem://{name}/client");
        client._peer = server;
        server._peer = client;
        return (client, server);
    }

    /// <inheritdoc />
    public override void Start(IFrameHandler handler)
    {
        _handler = handler;
        var receiver = new Thread(Receive) { IsBackground = true, Name = $"mem-receive {RemoteEndpoint}" };
        receiver.Start();
    }

    /// <inheritdoc />
    public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline)
    {
        Monitor.Enter(_sendLock);
        if (_frameOpen)
        {
            // Re-entered on the thread that holds the lock: refused as the real transports refuse it.
            Monitor.Exit(_sendLock);
            throw FrameAlreadyOpen(RemoteEndpoint);
        }
        if (_closed)
        {
            Monitor.Exit(_sendLock);
            throw new XCallDisconnectedException(RemoteEndpoint, "closed");
        }
        _frameOpen = true;
        _frame.ResetWrittenCount();
        FrameHeader copy = header;
        _frame.Write(MemoryMarshal.AsBytes(new ReadOnlySpan<FrameHeader>(in copy)));
        return _frame;
    }

    /// <inheritdoc />
    public override void CommitFrame()
    {
        _lastCommitThread = Environment.CurrentManagedThreadId;
        try
        {
            Committed.Enqueue(MemoryMarshal.Read<FrameHeader>(_frame.WrittenSpan));
            if (!_peer._closed)
            {
                _peer._inbox.Add(_frame.WrittenSpan.ToArray());
            }
        }
        finally
        {
            _frameOpen = false;
            Monitor.Exit(_sendLock);
        }
    }

    /// <summary>The headers of the frames this side committed, in order (<see cref="CommitFrame"/>).</summary>
    public System.Collections.Concurrent.ConcurrentQueue<FrameHeader> Committed { get; } = new();

    /// <summary>The managed thread id of the thread that committed this side's last frame (0 before the first).</summary>
    public int LastCommitThread => Volatile.Read(ref _lastCommitThread);

    /// <summary>How many frames were committed as batched (<see cref="CommitFrameBatched"/>: an async call pipelined behind others).</summary>
    public int BatchedCommits => Volatile.Read(ref _batchedCommits);

    /// <inheritdoc />
    public override void CommitFrameBatched()
    {
        Interlocked.Increment(ref _batchedCommits);
        CommitFrame();
    }

    /// <inheritdoc />
    public override void AbortFrame()
    {
        _frameOpen = false;
        Monitor.Exit(_sendLock);
    }

    /// <summary>Delivers raw bytes to the peer as if they were a frame (for malformed-input tests).</summary>
    public void InjectRaw(byte[] frame) => _peer._inbox.Add(frame);

    /// <inheritdoc />
    public override void Dispose() =>
        Close(new XCallDisconnectedException(RemoteEndpoint, "the peer closed the connection"));

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
        Close(error);
    }

    private void Close(Exception? error)
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
}
