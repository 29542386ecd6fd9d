using XCall.Transport;

namespace XCall.Runtime;

public sealed partial class XCallConnection
{
    /// <summary>
    /// The connection whose received call runs on this thread (the synchronous part of a call it dispatched,
    /// inline on the thread that reads its frames or on the pool); null when this thread runs none. A service
    /// uses it to learn which connection a call came over, for <see cref="WaitReceiving(IReplyWait, TimeSpan)"/>.
    /// </summary>
    public static XCallConnection? Current => t_dispatch?.Connection;

    /// <summary>
    /// Blocks until <paramref name="condition"/> says the wait is over (<see cref="IReplyWait.WaitOver"/>) or
    /// <paramref name="timeout"/> passes, reading this connection's incoming frames on the calling thread meanwhile
    /// when the transport lets it (<see cref="FrameChannel.WaitReceiving"/>): the calls that arrive run on this
    /// thread as they would on the thread that reads the frames, so a condition that such a call ends (a message a
    /// one-way call delivers to a mailbox) ends the wait with no hand-off between threads. When another thread
    /// reads the frames, this one blocks on <paramref name="condition"/> (<see cref="IReplyWait.Wait"/>) and that
    /// thread runs the calls. The condition's <see cref="IReplyWait.IsNested"/> is false unless the waiting thread
    /// runs a call received on this connection.
    /// </summary>
    /// <param name="condition">What the wait is for; whoever ends it must also release <see cref="IReplyWait.Wait"/>.</param>
    /// <param name="timeout">How long to wait at most, or <see cref="Timeout.InfiniteTimeSpan"/>.</param>
    /// <returns>False when the timeout passed first.</returns>
    /// <exception cref="InvalidOperationException">This thread runs a call of this connection on the thread that
    /// reads its frames (an inline dispatch): while it waits, nothing would read them.</exception>
    public bool WaitReceiving(IReplyWait condition, TimeSpan timeout) => WaitReceiving(condition, timeout, runsCallsTo: null);

    /// <summary>
    /// As <see cref="WaitReceiving(IReplyWait, TimeSpan)"/>; besides, a call to <paramref name="runsCallsTo"/> that this
    /// thread reads while it waits runs on this thread instead of on the thread pool (a two-way call received under
    /// <see cref="DispatchMode.Concurrent"/>; one-way calls keep their way): a call that ends the wait (a write to a
    /// channel this thread reads) then costs no hand-off between threads, and the wait goes on after it when it is not
    /// over, up to the second such call in a row: after that one the thread stops reading and blocks on
    /// <paramref name="condition"/>, and later calls run as any other (the traffic is someone else's). Where the transport
    /// allows it (<see cref="FrameChannel.MayAnswerInPlace"/>: over shared memory, while the outgoing ring has 64 KiB
    /// free) such a call runs where this thread read it, its arguments in place and the connection's frames still
    /// this thread's to read, as under <see cref="DispatchMode.Inline"/>: its reply goes out before the thread lets go of
    /// anything, and a wait on this connection inside it (a synchronous call,
    /// <see cref="WaitReceiving(IReplyWait, TimeSpan)"/>) throws <see cref="InvalidOperationException"/>. The waiting
    /// thread is lent to those calls, so the object's methods must not block (an async method that awaits does not): one
    /// that waits for something this thread would do after its wait, or for a frame of this connection, never ends.
    /// </summary>
    /// <param name="condition">What the wait is for; whoever ends it must also release <see cref="IReplyWait.Wait"/>.</param>
    /// <param name="timeout">How long to wait at most, or <see cref="Timeout.InfiniteTimeSpan"/>.</param>
    /// <param name="runsCallsTo">An object this connection's server exposes, or null (no call runs on this thread).</param>
    /// <returns>False when the timeout passed first.</returns>
    /// <exception cref="InvalidOperationException">This thread runs a call of this connection on the thread that
    /// reads its frames (an inline dispatch): while it waits, nothing would read them.</exception>
    public bool WaitReceiving(IReplyWait condition, TimeSpan timeout, object? runsCallsTo)
    {
        ArgumentNullException.ThrowIfNull(condition);
        if (timeout != Timeout.InfiniteTimeSpan)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(timeout, TimeSpan.Zero, nameof(timeout));
        }
        long deadline = timeout == Timeout.InfiniteTimeSpan ? long.MaxValue : Environment.TickCount64 + (long)Math.Ceiling(timeout.TotalMilliseconds);
        if (condition.WaitOver)
        {
            return true;
        }
        if (NestingCallId() == OnReceivingThread)
        {
            throw new InvalidOperationException(
                $"A call received on the connection to {RemoteEndpoint} runs on the thread that reads its frames, which cannot wait for them as well: " +
                "wait on another thread, or serve the contract with DispatchMode.Concurrent.");
        }
        CompletionDrain.BeforeBlockingWait();
        if (IsDispatchingOnThisThread)
        {
            return condition.Wait(deadline); // a call of this connection on the pool leaves the reading to the receiving thread
        }
        return runsCallsTo is null ? Channel.WaitReceiving(condition, deadline) : WaitRunningCalls(condition, deadline, runsCallsTo);
    }

    /// <summary>
    /// Says that this thread, which waits with <see cref="WaitReceiving(IReplyWait, TimeSpan)"/> on this connection, will
    /// wait there again soon although what it waited for last was there already: frames that arrive until then may wait
    /// for it rather than wake the thread that reads them otherwise (<see cref="FrameChannel.LendReceiving"/>). A thread
    /// running a call of this connection, or a transport that cannot lend its receiving, leaves everything as it is.
    /// </summary>
    public void LendReceiving()
    {
        if (!IsDispatchingOnThisThread && NestingCallId() != OnReceivingThread)
        {
            Channel.LendReceiving();
        }
    }

    // The wait of this thread that takes the calls read meanwhile, if any (see ReceivingWait).
    [ThreadStatic]
    private static ReceivingWait? t_receivingWait;

    // A ReceivingWait for the next wait on this thread; null while taken (a wait nested in a call run by another).
    [ThreadStatic]
    private static ReceivingWait? t_spareReceivingWait;

    private bool WaitRunningCalls(IReplyWait condition, long deadline, object runsCallsTo)
    {
        ReceivingWait wait = t_spareReceivingWait ?? new ReceivingWait();
        t_spareReceivingWait = null;
        wait.Begin(this, condition, runsCallsTo);
        ReceivingWait? outer = t_receivingWait;
        t_receivingWait = wait;
        try
        {
            while (true)
            {
                bool inTime = Channel.WaitReceiving(wait, deadline);
                if (wait.TakeOffered() is not { } call)
                {
                    // Stepped aside (see StepAsideFromReceivingWait): the receive thread reads on, this thread blocks.
                    return wait.SteppedAside && !condition.WaitOver ? condition.Wait(deadline) : inTime;
                }
                // The transport let go of the receiving when the call was offered: the call runs as the pool would
                // run it, and a wait inside it is a wait of its own.
                t_receivingWait = outer;
                RunNested(call);
                t_receivingWait = wait;
                if (condition.WaitOver)
                {
                    return true;
                }
                if (wait.CountMiss())
                {
                    // Calls in a row left the wait on: the traffic is another thread's (a reader of another channel),
                    // which reads it better itself; this thread blocks, the receiving already handed back.
                    return condition.Wait(deadline);
                }
                if (deadline != long.MaxValue && Environment.TickCount64 >= deadline)
                {
                    return false;
                }
            }
        }
        finally
        {
            t_receivingWait = outer;
            if (wait.TakeOffered() is { } unrun)
            {
                ThreadPool.UnsafeQueueUserWorkItem(unrun, preferLocal: false); // the wait ended by an exception
            }
            wait.End();
            t_spareReceivingWait = wait;
        }
    }

    /// <summary>
    /// From <see cref="OnCall"/>, for a call queued on the pool: when the thread that read it waits in
    /// <see cref="WaitRunningCalls"/> on this connection, the connection carries other traffic than the calls it waits
    /// for, which its receive thread serves better (it runs calls detached, a waiting thread can only queue them): the wait
    /// ends its reading and blocks on its condition, leaving the connection to the receive thread.
    /// </summary>
    private void StepAsideFromReceivingWait()
    {
        if (t_receivingWait is { } wait)
        {
            wait.StepAside(this);
        }
    }

    /// <summary>From <see cref="OnCall"/>: hands a call read by a thread in <see cref="WaitRunningCalls"/> to that thread, when it
    /// waits on this connection for calls to <paramref name="target"/> and holds none yet.</summary>
    private bool OfferToReceivingWait(object target, IThreadPoolWorkItem call) =>
        t_receivingWait is { } wait && wait.TryOffer(this, target, call);

    /// <summary>
    /// A <see cref="WaitRunningCalls"/> wait as the transport sees it: over when its condition is, or when the thread
    /// read a call it runs itself (<see cref="OfferToReceivingWait"/>). Offers come only from the waiting thread, inside
    /// the transport's reading, so the wait is never blocked when one comes.
    /// </summary>
    private sealed class ReceivingWait : IReplyWait
    {
        /// <summary>Calls in a row that leave the wait on after which its thread blocks (<see cref="CountMiss"/>).</summary>
        private const int MissesBeforeBlocking = 2;

        private XCallConnection? _connection;
        private IReplyWait _condition = null!;
        private object? _runsCallsTo;
        private IThreadPoolWorkItem? _offered;
        private bool _steppedAside;
        private int _misses;

        public bool IsCompleted => _condition.IsCompleted;

        public bool WaitOver => _offered is not null || _steppedAside || _condition.WaitOver;

        /// <summary>The thread read a call it does not run, and stops reading (<see cref="StepAsideFromReceivingWait"/>).</summary>
        public bool SteppedAside => _steppedAside;

        public bool IsNested => _condition.IsNested;

        // An offered call makes the wait over only to run it: the thread comes back for its condition right after,
        // unless this is the last call it runs before it blocks should the call leave the wait on (CountMiss): then the
        // receiving is handed back, not lent, even when the call turns out to end the wait. A thread that stepped
        // aside leaves the receiving to the receive thread.
        public bool ComesBack => !_steppedAside && (_offered is not null ? _misses + 1 < MissesBeforeBlocking : _condition.ComesBack);

        // A call may be offered after the transport's polling ended (it reads what slipped in while it gives the
        // receiving back): then the wait is over for it, whatever the transport does next.
        public bool Wait(long deadline) => _offered is not null || _condition.Wait(deadline);

        public void Begin(XCallConnection connection, IReplyWait condition, object runsCallsTo)
        {
            _connection = connection;
            _condition = condition;
            _runsCallsTo = runsCallsTo;
        }

        public void StepAside(XCallConnection connection)
        {
            if (ReferenceEquals(_connection, connection))
            {
                _steppedAside = true;
            }
        }

        /// <summary>
        /// The call just run left the wait on; true when <see cref="MissesBeforeBlocking"/> calls in a row did, and the
        /// thread is to block. A thread waiting for one channel while the connection carries another channel's traffic
        /// would otherwise run each of those calls and hand each value on to the thread that waits for it, a wake-up
        /// per call, for as long as that traffic lasts.
        /// </summary>
        public bool CountMiss() => ++_misses >= MissesBeforeBlocking;

        public void End()
        {
            _misses = 0;
            _steppedAside = false;
            _connection = null;
            _condition = null!;
            _runsCallsTo = null;
        }

        /// <summary>True when a call to <paramref name="target"/> read on this wait's thread from <paramref name="connection"/>
        /// runs where it was read (<see cref="RunInWait"/>): the wait takes such calls and is still reading.</summary>
        public bool RunsInPlace(XCallConnection connection, object target) =>
            ReferenceEquals(_connection, connection) && ReferenceEquals(_runsCallsTo, target) && _offered is null && !_steppedAside;

        /// <summary>
        /// A call just ran where it was read: one that left the wait on counts as a miss, as an offered call's does, and
        /// at the bound the wait steps aside (its thread stops reading, hands the receiving back, and blocks).
        /// </summary>
        public void RanInPlace()
        {
            if (!_condition.WaitOver && CountMiss())
            {
                _steppedAside = true;
            }
        }

        public bool TryOffer(XCallConnection connection, object target, IThreadPoolWorkItem call)
        {
            if (!ReferenceEquals(_connection, connection) || !ReferenceEquals(_runsCallsTo, target) || _offered is not null)
            {
                return false;
            }
            _offered = call;
            return true;
        }

        public IThreadPoolWorkItem? TakeOffered()
        {
            IThreadPoolWorkItem? call = _offered;
            _offered = null;
            return call;
        }
    }
}
