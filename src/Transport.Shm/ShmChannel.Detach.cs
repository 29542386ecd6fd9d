namespace XCall.Transport.Shm;

// Design: detached frames (FrameChannel.DetachFrame), the bookkeeping in DetachedFrames. Only the receive thread,
// polling in its own loop (not inside another detached frame), detaches, and only a frame of one record:
// RingReader.Detach releases it before the handler's work runs. The receive thread keeps the receiver role
// meanwhile. When DetachedFrames takes the run over (the work took long), HandOver gives the role directly to a new
// receive thread (_roleOwner is written for it: nobody else can take a role that is not free), which becomes
// _receiveThread; the old thread finds the run taken when its work returns and leaves its loop without touching the
// ring (its frame was released) or finishing the close (the new thread does). While the work waits for a reply
// (WaitDetached) the thread polls the ring itself, re-entrantly.
internal sealed partial class ShmChannel
{
    private DetachedFrames? _detached;

    private DetachedFrames Detached => _detached ??= new DetachedFrames(HandOver, () => Volatile.Read(ref _stopping) != 0);

    /// <summary>Tests: how many times the receiving was handed to a new thread because a detached frame's work took long.</summary>
    internal int HandOvers => _detached?.HandOvers ?? 0;

    /// <inheritdoc/>
    /// <remarks>Yes while the outgoing ring has 64 KiB free (half a ring smaller than 128 KiB): as last seen (no shared
    /// read), else (the peer may have read on since) from the peer's position, whose line the peer writes at every frame:
    /// a cache miss, paid only while the room last seen is short (the last sixteenth of each lap of a 1 MiB ring).</remarks>
    public override bool MayAnswerInPlace
    {
        get
        {
            int needed = Math.Min(64 << 10, _writer.Capacity / 2);
            return _writer.RoomLastSeen >= needed || _writer.Room >= needed;
        }
    }

    /// <inheritdoc/>
    public override bool CanDetachFrame =>
        Environment.CurrentManagedThreadId == _receiveThreadId
        && _reader.CanDetach
        && Volatile.Read(ref _stopping) == 0
        && Detached.MayDetach;

    /// <inheritdoc/>
    public override void DetachFrame()
    {
        if (!CanDetachFrame)
        {
            throw new NotSupportedException("Only the receive thread detaches a frame, from the frame's handler, outside another detached frame.");
        }
        _reader.Detach();
        Detached.Begin();
    }

    /// <inheritdoc/>
    public override bool TryDetachNextOneWay(Span<byte> payload, out FrameHeader header, out int length)
    {
        header = default;
        length = 0;
        // BeginTake proves this thread runs the channel's detached work and still holds its receiving, and keeps the watch
        // from handing it over while the next frame is taken; EndTake counts the next call as a new run for the watch.
        if (_detached is not { } detached || !_reader.HasData || Volatile.Read(ref _stopping) != 0 || !detached.BeginTake())
        {
            return false;
        }
        try
        {
            return _reader.TryTakeOneWay(payload, out header, out length);
        }
        finally
        {
            detached.EndTake();
        }
    }

    /// <summary>True when this thread runs a detached frame's work of this channel and may poll for a reply itself.</summary>
    private bool RunsDetached => _detached is { RunsHere: true };

    /// <summary>
    /// The receive thread, inside a detached frame's work, waits for a reply: it polls the ring itself (it holds the
    /// role), so the reply (or a call nested in its call) needs no other thread.
    /// </summary>
    private bool WaitDetached(IReplyWait call, long deadline)
    {
        IFrameHandler? handler = Volatile.Read(ref _handler);
        if (handler is null || !Detached.Pause())
        {
            return call.Wait(deadline); // handed over meanwhile: the new receive thread reads the reply
        }
        PumpOutcome outcome;
        try
        {
            outcome = Pump(call, deadline, handler, maySleep: true, pollsAll: false);
        }
        finally
        {
            Detached.Resume();
        }
        return outcome switch
        {
            PumpOutcome.Completed => true,
            PumpOutcome.TimedOut => call.IsCompleted,
            _ => call.Wait(deadline), // the watch hands the receiving over
        };
    }

    /// <summary>Gives the role, taken from a receive thread stuck in a detached frame's work, to a new receive thread.</summary>
    private void HandOver()
    {
        lock (_stateLock)
        {
            var thread = new Thread(() => ReceiveLoop(holdsRole: true)) { IsBackground = true, Name = $"xcall {_endpoint} receive" };
            _receiveThreadId = thread.ManagedThreadId;
            _receiveThread = thread;
            Volatile.Write(ref _roleOwner, thread.ManagedThreadId);
            thread.Start();
        }
    }
}
