using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm;

internal sealed partial class ShmChannel
{
    private FrameKind _openKind;   // the open frame's kind, and whether the peer's callers poll for it (under the send lock)
    private bool _openPolledFor;
    private bool _openOwed;        // the open frame is a call or hello whose answer counts in _callsSent
    private long _callsSent;       // call and hello frames sent but long waits: a peer answers each with one reply or error (see ReleaseRole)
    private int _wakesOutsideLock; // wake-ups claimed under the send lock and not yet issued after it

    /// <inheritdoc/>
    public override IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline)
    {
        EnterSendLock(deadline);
        return BeginFrameLocked(header, deadline);
    }

    /// <summary>Takes the send lock, waiting for it until <paramref name="deadline"/> (0: for ever).</summary>
    private void EnterSendLock(long deadline)
    {
        SendLock.Outcome entered = deadline == 0 ? _sendLock.Enter() : _sendLock.TryEnter(0);
        if (entered != SendLock.Outcome.Entered)
        {
            EnterContended(entered, deadline);
        }
    }

    /// <summary>BeginFrame's work once the send lock is held; lets go of it when the frame cannot be begun.</summary>
    private IBufferWriter<byte> BeginFrameLocked(in FrameHeader header, long deadline)
    {
        try
        {
            if (Volatile.Read(ref _stopping) != 0)
            {
                ThrowStopped();
            }
            _writer.Deadline = deadline;
            _writer.BeginFrame(header);
            _openKind = header.Kind;
            _openPolledFor = RingSignal.IsPolledFor(header);
            _openOwed = header.Kind is FrameKind.Call or FrameKind.Hello && (header.Flags & FrameFlags.LongWait) == 0;
            return _writer;
        }
        catch
        {
            _sendLock.Exit();
            throw;
        }
    }

    /// <summary>BeginFrame found the send lock held: waits for it until <paramref name="deadline"/> (the clock is read only
    /// here), or throws when this thread holds it (a call made while another call's arguments are being written).</summary>
    private void EnterContended(SendLock.Outcome entered, long deadline)
    {
        if (entered == SendLock.Outcome.TimedOut && deadline != 0)
        {
            entered = _sendLock.TryEnter(Deadline.RemainingMs(deadline));
        }
        if (entered == SendLock.Outcome.Reentered)
        {
            throw FrameAlreadyOpen(_endpoint);
        }
        if (entered == SendLock.Outcome.TimedOut)
        {
            throw new XCallTimeoutException(_endpoint, "another frame of the connection held the send side for the call's timeout (the peer takes no data)");
        }
    }

    /// <inheritdoc/>
    public override void CommitFrame()
    {
        CheckSendLockHeld();
        int wake = 0;
        try
        {
            FrameKind kind = _openKind;
            if (_openOwed)
            {
                Volatile.Write(ref _callsSent, _callsSent + 1); // before the frame is out (see ReleaseRole); one writer: the lock's holder
            }
            // What the peer's callers poll for needs no wake-up while they mark the ring so (RingSignal.MarkCallerPolls),
            // unless it streamed: its start may have been read by a receive thread that then went back to sleep.
            bool polledFor = _openPolledFor && !_writer.IsStreaming;
            // A one-way frame may be held in a batch (RingWriter's design notes); one added to a batch the reader has not
            // taken needs no wake-up check: the batch's head had one.
            if (_writer.Commit(hold: kind == FrameKind.OneWay))
            {
                wake = _outSignal.ClaimConsumerWake(_writer.Tail, polledFor);
            }
            PrepareWake(wake);
        }
        finally
        {
            StopIfBroken();
            _sendLock.Exit();
        }
        IssueWake(wake);
    }

    /// <summary>Under the send lock, a wake-up claimed for what was just published: the held batch goes out with it, and the
    /// ring stays mapped until <see cref="IssueWake"/> ran.</summary>
    private void PrepareWake(int wake)
    {
        if (wake != 0)
        {
            _writer.PublishHeld(); // the sleeper gets the whole batch when it wakes, not a held head to wait on
            Interlocked.Increment(ref _wakesOutsideLock); // the ring stays mapped until it is issued (ReleaseResources)
        }
    }

    /// <summary>
    /// Issues a wake-up claimed under the send lock, after letting go of it: a wake-up is a system call, and the thread it
    /// wakes may take this thread's core at once; held under the lock, every other sender of the connection would queue
    /// behind it.
    /// </summary>
    private void IssueWake(int wake)
    {
        if (wake != 0)
        {
            try
            {
                _outSignal.IssueConsumerWake(wake);
            }
            finally
            {
                Interlocked.Decrement(ref _wakesOutsideLock);
            }
        }
    }

    /// <inheritdoc/>
    public override void SendFrame(in FrameHeader header, ReadOnlySpan<byte> payload, long deadline)
    {
        EnterSendLock(deadline);
        if (header.Kind == FrameKind.OneWay && TryHoldWholeLocked(header, payload))
        {
            return;
        }
        BeginFrameLocked(header, deadline);
        try
        {
            Span<byte> span = _writer.GetSpan(payload.Length);
            if (span.Length >= payload.Length)
            {
                payload.CopyTo(span);
                _writer.Advance(payload.Length);
            }
            else
            {
                ((IBufferWriter<byte>)_writer).Write(payload); // past the first record's room: the writer's chunks
            }
        }
        catch
        {
            AbortFrame();
            throw;
        }
        CommitFrame();
    }

    /// <summary>
    /// A small one-way frame, all at hand, goes into the held batch in one step (RingWriter.TryHoldWhole), with CommitFrame's
    /// wake-up check, and the send lock is let go; false, the lock still held and nothing written, when the frame takes
    /// the ordinary way (the channel stops, the room the writer last saw does not hold it, or it is too large).
    /// </summary>
    private bool TryHoldWholeLocked(in FrameHeader header, ReadOnlySpan<byte> payload)
    {
        int wake = 0;
        bool declined = false;
        try
        {
            if (Volatile.Read(ref _stopping) != 0 || !_writer.TryHoldWhole(header, payload, out bool check))
            {
                declined = true; // the lock stays held for the ordinary way
                return false;
            }
            // As CommitFrame for a one-way frame: nobody polls for it, and one added to an open batch needs no check.
            if (check)
            {
                wake = _outSignal.ClaimConsumerWake(_writer.Tail, polledFor: false);
            }
            PrepareWake(wake);
        }
        finally
        {
            if (!declined)
            {
                _sendLock.Exit();
            }
        }
        IssueWake(wake);
        return true;
    }

    /// <summary>
    /// Commits a pipelined asynchronous call's frame. Its caller does not poll for the reply, nor look at the
    /// receiver role afterwards: so when nobody polls and the ring is left marked for callers (see ReleaseRole),
    /// this re-arms it for the receive thread, which then gets the reply; so it does when the receiving is lent (see
    /// ShmChannel.Lend.cs), whose thread may not come back before the watch ends the lend (a lend that begins just after
    /// this look re-checks the calls sent and re-arms).
    /// </summary>
    public override void CommitFrameBatched()
    {
        CommitFrame();
        if ((_inSignal.IsMarkedCallerPolls || IsLent) && Volatile.Read(ref _roleOwner) == RoleFree && Volatile.Read(ref _handler) is { } handler &&
            TryTakeFreeRole(Environment.CurrentManagedThreadId))
        {
            RearmAndLetGo(handler);
        }
    }

    /// <inheritdoc/>
    public override void AbortFrame()
    {
        CheckSendLockHeld();
        try
        {
            if (_writer.Broken || Volatile.Read(ref _stopping) != 0)
            {
                _writer.Drop(); // no abort record: it would wait for room the peer never frees; the ring goes with the channel
            }
            else if (_writer.IsFrameOpen && _writer.Abort())
            {
                _outSignal.WakeConsumerIfSleeping();
            }
        }
        finally
        {
            StopIfBroken();
            _sendLock.Exit();
        }
    }

    /// <summary>A frame timed out half published: nothing more can follow it in the ring, so the channel stops.</summary>
    private void StopIfBroken()
    {
        if (_writer.Broken)
        {
            RequestStop(StopKind.Fault, new XCallTimeoutException(_endpoint, "the peer stopped taking data in the middle of a frame; the connection is closed"));
        }
    }

    private void CheckSendLockHeld()
    {
        if (!_sendLock.IsHeldByCurrentThread || !_writer.IsFrameOpen)
        {
            throw new InvalidOperationException("No frame was begun on this thread (BeginFrame and CommitFrame/AbortFrame must run on the same thread).");
        }
    }

    [DoesNotReturn]
    private void ThrowStopped()
    {
        StopKind kind;
        Exception? error;
        lock (_stateLock)
        {
            kind = _stopKind;
            error = _stopError;
        }
        throw new XCallDisconnectedException(_endpoint, StopText(kind, error), error);
    }
}
