namespace XCall.Transport.Tcp;

// Design: detached frames (FrameChannel.DetachFrame), the bookkeeping in DetachedFrames. Only the receive thread,
// holding the reader token in its own loop (not inside another detached frame), detaches: every frame it delivers
// was consumed from the receive buffer before the handler runs (_rxStart moved past it), so detaching only flushes
// the replies held back for the batch (the work's own reply then leaves when it is committed) and counts the
// detach (t_detaches, per thread, which DispatchCompleteFrames compares around the handler). While the work waits
// for a reply (WaitDetached) the thread dispatches what is buffered and receives, re-entrantly, with the token it
// holds; DispatchCompleteFrames reloads the buffer state after a detached frame. When DetachedFrames takes the run
// over (the work took long), HandOver starts a new receive thread that owns the token as it is (ReaderThread); the
// old thread finds the run taken when its work returns (t_lostReader) and leaves without touching the receive
// buffer, the held frames or the token.
internal sealed partial class TcpFrameChannel
{
    [ThreadStatic]
    private static int t_detaches;

    [ThreadStatic]
    private static bool t_lostReader;

    private int _receiveThreadId;
    private DetachedFrames? _detached;

    private DetachedFrames Detached => _detached ??= new DetachedFrames(HandOver, () => IsClosed);

    /// <summary>Tests: how many times the receiving was handed to a new thread because a detached frame's work took long.</summary>
    internal int HandOvers => _detached?.HandOvers ?? 0;

    /// <inheritdoc/>
    public override bool CanDetachFrame =>
        Environment.CurrentManagedThreadId == _receiveThreadId
        && Volatile.Read(ref _reader) == ReaderThread
        && !IsClosed
        && Detached.MayDetach;

    /// <inheritdoc/>
    public override void DetachFrame()
    {
        if (!CanDetachFrame)
        {
            throw new NotSupportedException("Only the receive thread detaches a frame, from the frame's handler, outside another detached frame.");
        }
        t_detaches++;
        Detached.Begin();
        SendHeldFrames(); // the replies of the batch so far leave now, not after this frame's work
    }

    /// <summary>
    /// The receive thread, inside a detached frame's work, waits for a reply: it dispatches what is buffered and
    /// reads the socket itself (it holds the token), so the reply (or a call nested in its call) needs no other thread.
    /// </summary>
    private bool WaitDetached(IReplyWait call, long deadline, DetachedFrames detached)
    {
        IFrameHandler? handler = Volatile.Read(ref _handler);
        if (handler is null || !detached.Pause())
        {
            return SpinThenWait(call, deadline); // handed over meanwhile: the new receive thread reads the reply
        }
        try
        {
            while (!call.WaitOver && !IsClosed)
            {
                DispatchBufferedOrClose(handler); // frames that came with the detached one first: it also makes room to receive
                if (call.WaitOver || IsClosed)
                {
                    break;
                }
                int timeoutMs = _link is SocketLink ? CallCheckMs : -1;
                if (deadline != long.MaxValue)
                {
                    long left = deadline - Environment.TickCount64;
                    if (left <= 0)
                    {
                        break;
                    }
                    timeoutMs = (int)Math.Min(left, timeoutMs < 0 ? MaxPollMs : timeoutMs);
                }
                timeoutMs = TakeFlushAndSlice(timeoutMs);
                if (!ReceiveOnce(handler, timeoutMs))
                {
                    break;
                }
            }
        }
        finally
        {
            detached.Resume();
        }
        return call.WaitOver || SpinThenWait(call, deadline);
    }

    /// <summary>Dispatches what is buffered outside <see cref="ReceiveOnce"/>: a frame that cannot be read closes the channel.</summary>
    private void DispatchBufferedOrClose(IFrameHandler handler)
    {
        try
        {
            DispatchBuffered(handler);
        }
        catch (Exception ex)
        {
            if (!IsClosed)
            {
                CloseFromReader(TranslateError(ex));
            }
        }
    }

    /// <summary>Gives the token, taken from a receive thread stuck in a detached frame's work, to a new receive thread.</summary>
    private void HandOver()
    {
        var thread = new Thread(static s => ((TcpFrameChannel)s!).ReceiveLoop(holdsReader: true))
        {
            IsBackground = true,
            Name = "XCall tcp receive",
        };
        _receiveThreadId = thread.ManagedThreadId;
        thread.UnsafeStart(this);
    }
}
