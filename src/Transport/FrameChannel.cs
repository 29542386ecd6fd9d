using System.Buffers;

namespace XCall.Transport;

/// <summary>
/// One established connection of a transport, carrying frames both ways. Transports (shm, tcp, ...)
/// implement it; the call runtime above knows nothing else of them.
/// </summary>
/// <remarks>
/// Sending: <see cref="BeginFrame(in FrameHeader, long)"/> reserves the send side for the calling thread and returns an output
/// that writes straight into transport memory; <see cref="CommitFrame"/> publishes the frame and wakes the
/// peer; <see cref="AbortFrame"/> drops it (the marshalling threw). Other senders wait in between, so
/// frames never interleave. Receiving: after <see cref="Start"/>, every incoming frame is handed to the
/// handler in order.
/// </remarks>
public abstract class FrameChannel : IDisposable
{
    /// <summary>The address of the peer, for messages (e.g. <c>shm://calc</c>).</summary>
    public abstract string RemoteEndpoint { get; }

    /// <summary>
    /// Which underlying link the channel sends on: 0 for a channel that is its own link; a channel that
    /// replaces a lost link with a new one (reconnecting) counts up before the new link carries a frame.
    /// Object references received over one link mean nothing on the next (the peer that exposed them is gone).
    /// </summary>
    public int LinkGeneration => Volatile.Read(ref _linkGeneration);

    private int _linkGeneration;

    /// <summary>
    /// Closes link <paramref name="linkGeneration"/> over <paramref name="error"/> (a frame from it could not be
    /// read) when this channel replaces lost links: the connection above stays open and its next call
    /// reconnects. Returns false for a channel of one link, which its connection closes instead.
    /// </summary>
    public virtual bool DropLink(int linkGeneration, Exception error) => false;

    /// <summary>For a channel that replaces its link: counts <see cref="LinkGeneration"/> up, before the new link carries a frame; returns the new value.</summary>
    protected int NextLinkGeneration() => Interlocked.Increment(ref _linkGeneration);

    /// <summary>Starts delivering incoming frames to <paramref name="handler"/>.</summary>
    public abstract void Start(IFrameHandler handler);

    /// <summary>Reserves the send side and writes <paramref name="header"/>, with no deadline; returns the output for the payload.</summary>
    /// <exception cref="XCallDisconnectedException">The channel is closed.</exception>
    public IBufferWriter<byte> BeginFrame(in FrameHeader header) => BeginFrame(header, 0);

    /// <summary>
    /// Reserves the send side and writes <paramref name="header"/>; returns the output for the payload.
    /// <paramref name="deadline"/> (an <see cref="Environment.TickCount64"/> value, 0 for none) bounds every wait of
    /// this frame's sending (for the send side, for room in the transport's buffer): past it the transport throws
    /// <see cref="XCallTimeoutException"/>, and one that had already put part of the frame on the wire closes the
    /// channel (the frame cannot be taken back).
    /// </summary>
    /// <exception cref="XCallDisconnectedException">The channel is closed.</exception>
    /// <exception cref="XCallTimeoutException">The deadline passed before the frame could be sent.</exception>
    public abstract IBufferWriter<byte> BeginFrame(in FrameHeader header, long deadline);

    /// <summary>
    /// What <see cref="BeginFrame(in FrameHeader, long)"/> throws when this thread has a frame open on the channel already: a call made
    /// while another call's arguments are being written (by a property getter or a marshaller of an argument).
    /// </summary>
    protected static InvalidOperationException FrameAlreadyOpen(string endpoint) =>
        new($"A call to {endpoint} was made while the arguments of another call on the same connection were being written on this thread " +
            "(by a property getter or a marshaller of an argument): a connection writes one frame at a time. Make that call before the outer one, or on another connection.");

    /// <summary>
    /// Begins a frame as <see cref="BeginFrame(in FrameHeader, long)"/> does, for an asynchronous call, unless the channel would first
    /// have to make its link (a channel that replaces lost links, between a loss and the next link): then it
    /// returns null with nothing begun, and the caller awaits <see cref="ConnectAsync"/> and begins again, so no
    /// connect runs on the caller's thread. The default always begins the frame.
    /// </summary>
    /// <exception cref="XCallDisconnectedException">The channel is closed.</exception>
    public virtual IBufferWriter<byte>? TryBeginFrame(in FrameHeader header, long deadline) => BeginFrame(header, deadline);

    /// <summary>
    /// Makes the link <see cref="TryBeginFrame"/> found missing without blocking the caller: joins the attempt
    /// under way (also one a synchronous caller makes on its own thread) or starts one. Completes when the link
    /// is up. The wait, not the attempt, ends at <paramref name="deadline"/> (an <see cref="Environment.TickCount64"/>
    /// value, 0 for none) with <see cref="XCallTimeoutException"/> and when <paramref name="cancellationToken"/>
    /// fires with <see cref="OperationCanceledException"/>: the attempt goes on for the other callers. The default
    /// has no link to make.
    /// </summary>
    /// <exception cref="XCallDisconnectedException">The attempt failed, the backoff after a failed one runs, or the channel is closed.</exception>
    public virtual ValueTask ConnectAsync(long deadline, CancellationToken cancellationToken) => default;

    /// <summary>Publishes the frame begun by <see cref="BeginFrame(in FrameHeader, long)"/> and releases the send side.</summary>
    public abstract void CommitFrame();

    /// <summary>
    /// Sends a whole frame whose payload is written already (a one-way call's unmanaged arguments, written on the
    /// stack): what <see cref="BeginFrame(in FrameHeader, long)"/>, a copy of <paramref name="payload"/> and <see cref="CommitFrame"/> do,
    /// in one call, with no frame left open on the thread in between (so a channel that keeps per-thread state for an
    /// open frame keeps none). The default does exactly those three.
    /// </summary>
    /// <exception cref="XCallDisconnectedException">The channel is closed.</exception>
    /// <exception cref="XCallTimeoutException">The deadline passed before the frame could be sent.</exception>
    public virtual void SendFrame(in FrameHeader header, ReadOnlySpan<byte> payload, long deadline)
    {
        IBufferWriter<byte> output = BeginFrame(header, deadline);
        try
        {
            output.Write(payload);
        }
        catch
        {
            AbortFrame();
            throw;
        }
        CommitFrame();
    }

    /// <summary>
    /// Publishes the frame begun by <see cref="BeginFrame(in FrameHeader, long)"/> like <see cref="CommitFrame"/>, for a frame nobody
    /// waits on right away (a pipelined asynchronous call, made while the one before it is still owed): the
    /// transport may send it a moment later, on another thread, in one write with the frames committed after
    /// it. The default sends it like <see cref="CommitFrame"/>.
    /// </summary>
    /// <exception cref="XCallDisconnectedException">The channel is closed.</exception>
    public virtual void CommitFrameBatched() => CommitFrame();

    /// <summary>
    /// The link whose frames lend large arrays to the peer (<see cref="XCall.Marshal.IBlockLender"/>; shared memory with
    /// cross-memory attach), null when this channel lends nothing. A synchronous call sets
    /// <see cref="FrameFlags.CallerWaits"/> only on such a link, and takes its loans back there
    /// (<see cref="TakeBackLoans"/>) when it stops waiting without a reply.
    /// </summary>
    public virtual FrameChannel? LoanLink => null;

    /// <summary>
    /// Call <paramref name="callId"/>'s caller stops waiting without its reply (a timeout, a cancellation, a lost
    /// link): takes back the arrays its frame lent, waiting for a read of them in progress, so the caller gets them
    /// back only once the peer cannot read them.
    /// </summary>
    public virtual void TakeBackLoans(ulong callId)
    {
    }

    /// <summary>Drops the frame begun by <see cref="BeginFrame(in FrameHeader, long)"/> and releases the send side.</summary>
    public abstract void AbortFrame();

    /// <summary>
    /// Waits until <paramref name="call"/> completes or <paramref name="deadline"/> (a
    /// <see cref="Environment.TickCount64"/> value, or <see cref="long.MaxValue"/>) passes. The default
    /// blocks on the call's own wait; a transport may instead pump incoming frames on the caller's thread
    /// (leader / follower), which saves a thread hop per reply.
    /// </summary>
    /// <returns>False when the deadline passed first.</returns>
    public virtual bool WaitForReply(IReplyWait call, long deadline) => call.Wait(deadline);

    /// <summary>
    /// Waits until <paramref name="condition"/> is over (<see cref="IReplyWait.WaitOver"/>) or <paramref name="deadline"/>
    /// passes, as <see cref="WaitForReply"/> does, for a condition that a frame of any kind may end (a message that
    /// a one-way call delivers, not only a reply): the transport reads incoming frames on the calling thread when
    /// no other thread reads them, and handles them there as its receiving thread would, so the frame that ends
    /// the wait needs no hand-off between threads. While it reads, the peer wakes no other thread of this side for
    /// any frame; when it stops, the receiving thread takes over again. One thread reads at a time: a caller that
    /// cannot read (another thread reads, or this one is inside a frame's handler) blocks on the condition. The
    /// default is <see cref="WaitForReply"/>.
    /// </summary>
    /// <returns>False when the deadline passed first.</returns>
    public virtual bool WaitReceiving(IReplyWait condition, long deadline) => WaitForReply(condition, deadline);

    /// <summary>
    /// Says that the calling thread, which reads this channel's frames while it waits (<see cref="WaitReceiving"/>), will
    /// wait here again soon although its last wait needed none (what it waited for was there already): until it comes
    /// back, frames that arrive may wait for it instead of waking the transport's receiving thread, which the transport
    /// wakes if nobody came within about a millisecond. Nothing happens when another thread reads the frames, frames are
    /// waiting, or the transport cannot lend its receiving (the default).
    /// </summary>
    public virtual void LendReceiving()
    {
    }

    /// <summary>
    /// Asked from <see cref="IFrameHandler.OnFrame"/> on a thread that reads the channel while it waits
    /// (<see cref="WaitReceiving"/>): true when the handler may run a short call right there, the frame not yet consumed
    /// and nobody else reading the channel, and send what that call sends. Nothing reads the channel until the call
    /// returns, so a transport says yes only while its outgoing side has room to spare for those frames: a call that had
    /// to wait for room while the peer waits the same way for this side would wait for ever. The default says no.
    /// </summary>
    public virtual bool MayAnswerInPlace => false;

    /// <summary>
    /// Asked from <see cref="IFrameHandler.OnFrame"/>, on the thread that delivers the frame: true when the handler
    /// may keep that thread for a while (<see cref="DetachFrame"/>) without holding up the channel's later frames.
    /// A transport says yes only on its own receiving thread, outside another detached frame, for a frame it can
    /// release before the handler returns. The default says no.
    /// </summary>
    public virtual bool CanDetachFrame => false;

    /// <summary>
    /// Called from <see cref="IFrameHandler.OnFrame"/> after <see cref="CanDetachFrame"/> said true and the handler
    /// copied what it needs of the payload (its reader must not be used after this): the frame counts as consumed,
    /// and until <see cref="IFrameHandler.OnFrame"/> returns the channel delivers the frames after it elsewhere: on
    /// this thread while it waits in <see cref="WaitForReply"/> (re-entrantly, and never as another detached frame),
    /// and on another thread when this one has not returned within about a millisecond (the channel hands its
    /// receiving over; this thread leaves it when it returns).
    /// </summary>
    /// <exception cref="NotSupportedException">The channel does not detach frames (<see cref="CanDetachFrame"/> said no).</exception>
    public virtual void DetachFrame() => throw new NotSupportedException("This channel does not detach frames.");

    /// <summary>
    /// From the work of a detached one-way call (<see cref="DetachFrame"/>), on the thread that runs it, once that call
    /// returned: when the channel's next frame is already there whole, is a one-way call and fits in
    /// <paramref name="payload"/>, copies its payload there (<paramref name="length"/> bytes), consumes it as
    /// <see cref="DetachFrame"/> would, and returns true: the caller runs it next, as part of the same detached work,
    /// without going back through <see cref="IFrameHandler.OnFrame"/>. So a run of one-way calls is drained in one loop, in
    /// the order they were sent. False (nothing consumed) when there is no such frame, the channel stops, or the
    /// receiving was handed to another thread meanwhile. The default says false.
    /// </summary>
    /// <exception cref="XCallProtocolException">The next record is malformed (the channel then closes).</exception>
    public virtual bool TryDetachNextOneWay(Span<byte> payload, out FrameHeader header, out int length)
    {
        header = default;
        length = 0;
        return false;
    }

    /// <summary>
    /// For an asynchronous call that is not pipelined (the async call made before it on the connection has
    /// completed; a long call still waiting elsewhere does not count): a transport whose replies arrive within
    /// a microsecond (shared memory) may poll for it briefly on the caller's thread, so a fast reply completes
    /// the call before it goes asynchronous (no wake-up of a receive thread, no continuation on the pool).
    /// Never blocks beyond a short spin. The default does nothing.
    /// </summary>
    /// <returns>True when the call completed while polling.</returns>
    public virtual bool TryPollForReply(IReplyWait call) => call.IsCompleted;

    /// <summary>Closes the channel; pending calls fail with <see cref="XCallDisconnectedException"/>.</summary>
    public abstract void Dispose();
}
