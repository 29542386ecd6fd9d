using System.Buffers;
using System.Runtime.CompilerServices;
using XCall.Marshal;

namespace XCall.Runtime.CompilerServices;

// What a generated proxy does with its call, in order: BeginCall (ProxyBase) opens the frame; Arguments writes
// into it; SendAndWait or SendAsync publishes it and waits; GetReplyReader or EndVoidReply reads the reply; End
// gives the call back. On an exception the proxy calls Abort (drops the frame if it was never sent), and
// CloseOnMalformedReply from a filter (a reply that cannot be read ends its link).
public sealed partial class PendingCall
{
    private const int FrameOpen = 0;
    private const int FrameSent = 1;
    private const int FrameDropped = 2;

    private IBufferWriter<byte>? _output;
    private int _frame;

    /// <summary>The call's frame is open on <paramref name="output"/>, for its arguments.</summary>
    internal void Opened(IBufferWriter<byte> output)
    {
        _output = output;
        _frame = FrameOpen;
    }

    /// <summary>A writer of the call's arguments, straight into the transport's memory.</summary>
    public MarshalWriter Arguments() => new(_output!) { Context = _connection, Limits = _connection.Options.Limits };

    /// <summary>Publishes the call with <paramref name="arguments"/> and waits for its reply (synchronous methods).</summary>
    /// <exception cref="XCallTimeoutException">No reply within the call timeout.</exception>
    /// <exception cref="XCallDisconnectedException">The connection is gone.</exception>
    public void SendAndWait(ref MarshalWriter arguments)
    {
        Finish(ref arguments);
        _connection.SendAndWait(this);
    }

    /// <summary>
    /// <see cref="SendAndWait(ref MarshalWriter)"/> for a method with a <see cref="CancellationToken"/>: cancelling it
    /// sends a cancel frame and fails the call with <see cref="OperationCanceledException"/>.
    /// </summary>
    public void SendAndWait(ref MarshalWriter arguments, CancellationToken cancellationToken)
    {
        Finish(ref arguments);
        using CancellationTokenRegistration registration = _connection.RegisterCancellation(this, cancellationToken);
        _connection.SendAndWait(this);
    }

    /// <summary>Publishes the call with <paramref name="arguments"/>; the task completes with its reply (asynchronous methods).</summary>
    public ValueTask SendAsync(ref MarshalWriter arguments, CancellationToken cancellationToken)
    {
        Finish(ref arguments);
        return _connection.SendAsync(this, cancellationToken);
    }

    /// <summary>
    /// Publishes the call with <paramref name="arguments"/>; the task completes with what <paramref name="read"/>
    /// reads from its reply, and the call is given back (asynchronous methods returning <see cref="Task{TResult}"/>).
    /// The only allocations are the task and, for a result without references, its source; <paramref name="read"/> runs
    /// on the thread that completes the task: for a result without references the one that received the reply (so
    /// a task nobody awaits yet completes with no hand-off, and continuations go to the thread pool), else the
    /// connection's drainer.
    /// </summary>
    public Task<T> SendForTask<T>(ref MarshalWriter arguments, CancellationToken cancellationToken, Func<PendingCall, T> read)
    {
        if (cancellationToken.CanBeCanceled || Deadline != 0)
        {
            return ReadAfter(SendAsync(ref arguments, cancellationToken), read);
        }
        Finish(ref arguments);
        TaskReply<T> reply = SpareReply<T>();
        // A result without references is read from the reply without an object graph or an imported reference: the
        // thread that receives the reply reads it and completes the task there (see TaskReply). That read still runs a
        // [Data] struct's constructor and init setters and the telemetry listeners on the receiving thread, as inline
        // dispatch runs server methods there; a malformed reply closes the connection from that thread.
        Task<T> task = reply.Start(read, completesWhereReplied: !RuntimeHelpers.IsReferenceOrContainsReferences<T>());
        if (!_connection.SendAwaited(this, reply))
        {
            reply.Complete(this); // completed here: the task is complete when the caller gets it
        }
        return task;
    }

    /// <summary><see cref="SendForTask{T}(ref MarshalWriter, CancellationToken, Func{PendingCall, T})"/> for a method without a result (<see cref="Task"/>).</summary>
    public Task SendForTask(ref MarshalWriter arguments, CancellationToken cancellationToken) =>
        SendForTask(ref arguments, cancellationToken, AsyncReply.EndVoid);

    /// <summary>
    /// Publishes the call with <paramref name="arguments"/> (asynchronous methods returning <see cref="ValueTask{TResult}"/>):
    /// the value task wraps the call's <see cref="Task{TResult}"/> (<see cref="SendForTask{T}(ref MarshalWriter, CancellationToken, Func{PendingCall, T})"/>),
    /// so the call goes back to the pool when its reply is in, whether or not the caller awaits it, and reading its
    /// result early blocks as a task's does.
    /// </summary>
    public ValueTask<T> SendForValueTask<T>(ref MarshalWriter arguments, CancellationToken cancellationToken, Func<PendingCall, T> read) =>
        new(SendForTask(ref arguments, cancellationToken, read));

    /// <summary><see cref="SendForValueTask{T}(ref MarshalWriter, CancellationToken, Func{PendingCall, T})"/> for a method without a result (<see cref="ValueTask"/>).</summary>
    public ValueTask SendForValueTask(ref MarshalWriter arguments, CancellationToken cancellationToken) =>
        new(SendForTask(ref arguments, cancellationToken));

    // A call that can be cancelled or time out waits through SendAsync (its registrations live as long as the wait),
    // then reads its reply: the state machine's allocation is the price of the token or the timeout.
    private async Task<T> ReadAfter<T>(ValueTask sent, Func<PendingCall, T> read)
    {
        try
        {
            await sent.ConfigureAwait(false);
        }
        catch
        {
            End();
            throw;
        }
        return ReadReplyAndEnd(read);
    }

    private void Finish(ref MarshalWriter arguments)
    {
        arguments.Flush();
        RequestBytes = arguments.BytesWritten;
        _frame = FrameSent; // from here on the frame belongs to the transport, even if sending throws
    }

    /// <summary>After an exception: drops the call's frame if it was never sent. <see cref="End"/> follows.</summary>
    public void Abort()
    {
        if (_frame == FrameOpen)
        {
            _frame = FrameDropped;
            _connection.DropOpenFrame();
        }
    }

    /// <summary>
    /// From an exception filter: a reply that cannot be read is a malformed frame, which ends its link (a
    /// reconnecting channel reconnects on the next call, any other closes the connection). Returns false, so the
    /// exception reaches the caller unchanged; an exception before the call was sent closes nothing.
    /// </summary>
    public bool CloseOnMalformedReply(XCallProtocolException error)
    {
        if (_frame == FrameSent)
        {
            _connection.CloseOnMalformedReply(this, error);
        }
        return false;
    }

    /// <summary>Gives the finished call back (reporting it to telemetry if it was sent); the object is reused.</summary>
    public void End() => _connection.EndCall(this, sent: _frame == FrameSent);
}
