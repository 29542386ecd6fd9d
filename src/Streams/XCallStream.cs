using System.Buffers;
using System.Buffers.Binary;
using System.IO.Pipelines;
using XCall.Marshal;
using XCall.Transport;

namespace XCall.Streams;

// Design:
// - Bytes travel in Data frames of at most StreamFrame.MaxChunk bytes; a Credit frame lets the peer send that many
//   more; EndOfData is the half-close. Each side grants its receive window once when it starts and afterwards what
//   its reader consumed (in steps of a quarter window), so the bytes buffered here never exceed the window.
// - The receive thread never blocks: it appends to _input (a pipe that never pauses its writer) and returns, so the
//   rings always drain and a credit frame always gets through. Backpressure is the writer awaiting credit.
// - _input's writer is used only under _inputLock (frames on the receive thread; the close); one reader reads it.
// - _receiveAllowance (what the peer may still send) goes down on the receive thread and up before a credit frame
//   leaves, both through Interlocked: a data frame beyond it is a protocol error that closes the connection.
// - _credit, _creditWaiter, _closed change only under _creditLock; the waiter is completed outside the lock.
// - A reader waiting for data resumes on the receive thread itself when the transport lets that thread keep a frame
//   (FrameChannel.CanDetachFrame, shared memory): the frame is detached first, so the channel hands its receiving to
//   another thread if the reader's work takes long; otherwise it resumes on the thread pool. The pipe's reader
//   scheduler parks the continuation in _deferred while the receive thread publishes under _inputLock (t_delivering
//   names the stream), and OnFrame runs it after leaving the lock.

/// <summary>
/// A byte stream over one XCall connection (shared memory or TCP): full duplex, with backpressure (a writer waits
/// while the peer's reader is a receive window behind) and half-close (<see cref="CompleteWrites"/>). Made by
/// <see cref="XCallStreams.ConnectAsync"/> and <see cref="XCallStreamListener.AcceptAsync"/>.
/// </summary>
/// <remarks>
/// One reader and one writer may use the stream at the same time (as with a socket's stream). Transport failures
/// surface as <see cref="IOException"/> whose inner exception is the transport's. An orderly close by the peer
/// reads as end of stream.
/// </remarks>
public sealed class XCallStream : Stream
{
    private readonly FrameChannel _channel;
    [ThreadStatic]
    private static XCallStream? t_delivering;

    private readonly Pipe _input;
    private readonly Lock _inputLock = new();
    private readonly Lock _creditLock = new();
    private readonly int _receiveWindow;
    private long _receiveAllowance;
    private long _consumedSinceGrant;
    private bool _inputDone;
    private long _credit;
    private TaskCompletionSource? _creditWaiter;
    private Exception? _closed;
    private int _writesCompleted;
    private int _disposed;
    private (Action<object?> Action, object? State)? _deferred; // the receive thread's, between a publish and leaving _inputLock

    internal XCallStream(FrameChannel channel, int receiveWindow)
    {
        _channel = channel;
        _input = new Pipe(new PipeOptions(
            readerScheduler: new ReaderScheduler(this),
            pauseWriterThreshold: 0,
            resumeWriterThreshold: 0,
            useSynchronizationContext: false));
        _receiveWindow = receiveWindow;
        channel.Start(new Handler(this));
        try
        {
            Grant(receiveWindow);
        }
        catch (IOException)
        {
            // The peer's first frames closed the channel before the grant went out (a malformed frame, a peer gone at
            // once). The channel tells the handler of its close, so this stream's reads and writes report why.
        }
    }

    /// <summary>The address of the peer (e.g. <c>shm://greeter</c>).</summary>
    public string RemoteEndpoint => _channel.RemoteEndpoint;

    /// <summary>Bytes the peer may send ahead of this side's reader (<see cref="XCallStreamOptions.ReceiveWindow"/>).</summary>
    public int ReceiveWindow => _receiveWindow;

    /// <inheritdoc/>
    public override bool CanRead => true;

    /// <inheritdoc/>
    public override bool CanWrite => true;

    /// <inheritdoc/>
    public override bool CanSeek => false;

    /// <inheritdoc/>
    public override long Length => throw new NotSupportedException("An XCall stream has no length.");

    /// <inheritdoc/>
    public override long Position
    {
        get => throw new NotSupportedException("An XCall stream has no position.");
        set => throw new NotSupportedException("An XCall stream has no position.");
    }

    /// <summary>
    /// Half-closes the stream: tells the peer this side writes no more (its reads then end), while this side goes on
    /// reading. Later writes throw <see cref="InvalidOperationException"/>.
    /// </summary>
    /// <exception cref="IOException">The connection is lost.</exception>
    public void CompleteWrites()
    {
        if (Interlocked.Exchange(ref _writesCompleted, 1) == 0)
        {
            SendFrame(StreamFrame.EndOfData, []);
        }
    }

    /// <summary>
    /// The stream as an <see cref="IDuplexPipe"/> (what Kestrel's connections and StreamJsonRpc's pipe handlers
    /// take). Use either the pipe or the stream's own Read and Write, not both.
    /// </summary>
    public IDuplexPipe AsDuplexPipe() => new DuplexPipe(
        PipeReader.Create(this, new StreamPipeReaderOptions(leaveOpen: true)),
        PipeWriter.Create(this, new StreamPipeWriterOptions(leaveOpen: true)));

    /// <inheritdoc/>
    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    /// <inheritdoc/>
    public override int Read(Span<byte> buffer)
    {
        PipeReader reader = _input.Reader;
        if (!reader.TryRead(out ReadResult result))
        {
            result = reader.ReadAsync().AsTask().GetAwaiter().GetResult();
        }
        return Take(result, buffer);
    }

    /// <inheritdoc/>
    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    /// <inheritdoc/>
    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        PipeReader reader = _input.Reader;
        if (!reader.TryRead(out ReadResult result))
        {
            result = await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
        }
        return Take(result, buffer.Span);
    }

    /// <summary>Copies what <paramref name="result"/> holds into <paramref name="buffer"/>; a zero-byte read only waits for data.</summary>
    private int Take(ReadResult result, Span<byte> buffer)
    {
        ReadOnlySequence<byte> data = result.Buffer;
        if (buffer.IsEmpty || data.IsEmpty)
        {
            _input.Reader.AdvanceTo(data.Start);
            return 0;
        }
        int n = (int)Math.Min(buffer.Length, data.Length);
        data.Slice(0, n).CopyTo(buffer);
        _input.Reader.AdvanceTo(data.GetPosition(n));
        _consumedSinceGrant += n;
        if (_consumedSinceGrant >= _receiveWindow / 4)
        {
            long grant = _consumedSinceGrant;
            _consumedSinceGrant = 0;
            try
            {
                Grant(grant);
            }
            catch (IOException)
            {
                // The connection is gone: the bytes already here are still read; the next read ends or throws.
            }
        }
        return n;
    }

    /// <inheritdoc/>
    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    /// <inheritdoc/>
    public override void Write(ReadOnlySpan<byte> buffer)
    {
        while (!buffer.IsEmpty)
        {
            int n = TakeCredit(buffer.Length);
            if (n == 0)
            {
                CreditArrived().GetAwaiter().GetResult();
                continue;
            }
            SendFrame(StreamFrame.Data, buffer[..n]);
            buffer = buffer[n..];
        }
    }

    /// <inheritdoc/>
    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    /// <inheritdoc/>
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        while (!buffer.IsEmpty)
        {
            int n = TakeCredit(buffer.Length);
            if (n == 0)
            {
                return WriteWhenCreditedAsync(buffer, cancellationToken);
            }
            SendFrame(StreamFrame.Data, buffer.Span[..n]);
            buffer = buffer[n..];
        }
        return default;
    }

    private async ValueTask WriteWhenCreditedAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        while (!buffer.IsEmpty)
        {
            int n = TakeCredit(buffer.Length);
            if (n == 0)
            {
                await CreditArrived().WaitAsync(cancellationToken).ConfigureAwait(false);
                continue;
            }
            SendFrame(StreamFrame.Data, buffer.Span[..n]);
            buffer = buffer[n..];
        }
    }

    /// <summary>Frames go out as they are written: nothing to flush.</summary>
    public override void Flush()
    {
    }

    /// <inheritdoc/>
    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <inheritdoc/>
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException("An XCall stream cannot seek.");

    /// <inheritdoc/>
    public override void SetLength(long value) => throw new NotSupportedException("An XCall stream has no length.");

    /// <summary>Closes the connection: the peer reads end of stream after what was written.</summary>
    protected override void Dispose(bool disposing)
    {
        if (disposing && Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _channel.Dispose();
            CompleteInput(null); // a read in progress ends; frames still arriving are dropped
        }
        base.Dispose(disposing);
    }

    /// <summary>Takes up to <paramref name="wanted"/> bytes of credit (at most a chunk); 0 when there is none.</summary>
    private int TakeCredit(int wanted)
    {
        if (Volatile.Read(ref _writesCompleted) != 0)
        {
            throw new InvalidOperationException("The stream's writes were completed (CompleteWrites); it can only read now.");
        }
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        lock (_creditLock)
        {
            if (_closed is not null)
            {
                throw new IOException($"The XCall stream to {_channel.RemoteEndpoint} is closed.", _closed);
            }
            int n = (int)Math.Min(Math.Min(_credit, wanted), StreamFrame.MaxChunk);
            _credit -= n;
            return n;
        }
    }

    private Task CreditArrived()
    {
        lock (_creditLock)
        {
            if (_credit > 0 || _closed is not null)
            {
                return Task.CompletedTask;
            }
            _creditWaiter ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return _creditWaiter.Task;
        }
    }

    private void Grant(long bytes)
    {
        Interlocked.Add(ref _receiveAllowance, bytes);
        Span<byte> payload = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(payload, bytes);
        SendFrame(StreamFrame.Credit, payload);
    }

    private void SendFrame(uint kind, ReadOnlySpan<byte> payload)
    {
        try
        {
            _channel.SendFrame(new FrameHeader(FrameKind.OneWay, 0, 0, kind), payload, deadline: 0);
        }
        catch (Exception ex) when (ex is XCallException or ObjectDisposedException)
        {
            // The channel is closed, or closed as the frame went out (a tcp write that failed).
            throw new IOException($"The XCall stream to {_channel.RemoteEndpoint} is closed: {ex.Message}", ex);
        }
    }

    private void OnFrame(in FrameHeader header, ref MarshalReader payload)
    {
        if (header.Kind != FrameKind.OneWay || header.CallId != 0 || header.ObjectId != 0 || header.Flags != 0)
        {
            throw new XCallProtocolException($"Unexpected {header.Kind} frame (call {header.CallId}, object {header.ObjectId}, flags {header.Flags}) on a byte stream.");
        }
        long length = payload.Remaining;
        switch (header.MethodId)
        {
            case StreamFrame.Data:
                if (length is <= 0 or > StreamFrame.MaxChunk || length > Volatile.Read(ref _receiveAllowance))
                {
                    throw new XCallProtocolException($"A data frame of {length} bytes on a byte stream that allows 1 to {Math.Min(StreamFrame.MaxChunk, Volatile.Read(ref _receiveAllowance))} (the peer ignored its credit).");
                }
                Interlocked.Add(ref _receiveAllowance, -length);
                lock (_inputLock)
                {
                    if (!_inputDone)
                    {
                        Span<byte> span = _input.Writer.GetSpan((int)length);
                        payload.ReadBlock(span[..(int)length]);
                        _input.Writer.Advance((int)length);
                        // The pipe never pauses its writer: the flush only publishes, synchronously; a reader it
                        // resumes is parked in _deferred.
                        t_delivering = this;
                        try
                        {
                            _input.Writer.FlushAsync().GetAwaiter().GetResult();
                        }
                        finally
                        {
                            t_delivering = null;
                        }
                    }
                }
                ResumeReader();
                break;
            case StreamFrame.Credit:
                long grant = length == sizeof(long) ? payload.Read<long>() : -1;
                if (grant <= 0)
                {
                    throw new XCallProtocolException($"A credit frame of {length} bytes granting {grant} on a byte stream (expected 8 bytes, a positive count).");
                }
                TaskCompletionSource? waiter;
                lock (_creditLock)
                {
                    if (_credit > long.MaxValue - grant)
                    {
                        throw new XCallProtocolException("The peer granted more credit than a byte stream can count.");
                    }
                    _credit += grant;
                    waiter = _creditWaiter;
                    _creditWaiter = null;
                }
                waiter?.TrySetResult();
                break;
            case StreamFrame.EndOfData:
                if (length != 0)
                {
                    throw new XCallProtocolException($"An end-of-data frame with {length} bytes of payload on a byte stream.");
                }
                CompleteInput(null);
                break;
            default:
                throw new XCallProtocolException($"Unknown byte-stream frame {header.MethodId}.");
        }
    }

    /// <summary>
    /// Runs the reader that the frame just delivered resumed: on this (the receive) thread when the channel lets it
    /// keep the frame, which is detached first (the payload was copied), else on the thread pool.
    /// </summary>
    private void ResumeReader()
    {
        if (_deferred is not { } resume)
        {
            return;
        }
        _deferred = null;
        if (_channel.CanDetachFrame)
        {
            _channel.DetachFrame();
            resume.Action(resume.State);
        }
        else
        {
            ThreadPool.UnsafeQueueUserWorkItem(resume.Action, resume.State, preferLocal: false);
        }
    }

    private void OnClosed(Exception? error)
    {
        var closed = new IOException(error is null
            ? $"The XCall stream to {_channel.RemoteEndpoint} is closed."
            : $"The XCall stream to {_channel.RemoteEndpoint} is lost: {error.Message}", error);
        TaskCompletionSource? waiter;
        lock (_creditLock)
        {
            _closed = closed;
            waiter = _creditWaiter;
            _creditWaiter = null;
        }
        waiter?.TrySetResult(); // the writer wakes and finds the stream closed
        CompleteInput(error is null ? null : closed); // after: a reader that saw the end finds writes refused
    }

    private void CompleteInput(Exception? error)
    {
        lock (_inputLock)
        {
            if (!_inputDone)
            {
                _inputDone = true;
                _input.Writer.Complete(error);
            }
        }
    }

    private sealed class Handler(XCallStream owner) : IFrameHandler
    {
        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload) => owner.OnFrame(header, ref payload);

        public void OnClosed(Exception? error) => owner.OnClosed(error);
    }

    /// <summary>Where the input pipe resumes its reader: parked for <see cref="ResumeReader"/> when the receive thread
    /// publishes a data frame, on the thread pool otherwise (the end of the input, a cancelled read).</summary>
    private sealed class ReaderScheduler(XCallStream owner) : PipeScheduler
    {
        public override void Schedule(Action<object?> action, object? state)
        {
            if (t_delivering == owner && owner._deferred is null)
            {
                owner._deferred = (action, state);
            }
            else
            {
                System.Threading.ThreadPool.UnsafeQueueUserWorkItem(action, state, preferLocal: false);
            }
        }
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }
}
