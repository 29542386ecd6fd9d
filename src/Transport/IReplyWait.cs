namespace XCall.Transport;

/// <summary>
/// A call waiting for its reply, as the transport that carries it sees it: <see cref="FrameChannel.WaitForReply"/>
/// and <see cref="FrameChannel.TryPollForReply"/> wait on it, and may pump incoming frames on the caller's thread
/// meanwhile. The call runtime implements it.
/// </summary>
public interface IReplyWait
{
    /// <summary>The call has its reply or its failure.</summary>
    bool IsCompleted { get; }

    /// <summary>The waiting thread has something to do: the call completed, or a call nested in it (a callback it
    /// caused) was handed to the waiting thread to run.</summary>
    bool WaitOver { get; }

    /// <summary>The waiting thread is itself running a call received on the same connection, so it must not
    /// take over the connection's receiving while it waits.</summary>
    bool IsNested { get; }

    /// <summary>Blocks until <see cref="WaitOver"/> or <paramref name="deadline"/> (an <see cref="Environment.TickCount64"/>
    /// value, or <see cref="long.MaxValue"/>) passes; false when the deadline passed first.</summary>
    bool Wait(long deadline);

    /// <summary>The wait ended only for a call nested in this one, which the waiting thread runs now; then it waits for
    /// this call again, on the same connection, unless the call ended meanwhile (a cancel): then its next wait finds
    /// <see cref="WaitOver"/> at once. A transport may let the connection's receiving go without arranging for anybody
    /// else to read this call's reply, as long as that next wait puts back what it left.</summary>
    bool WaitsAgain => false;

    /// <summary>
    /// The waiting thread is likely to wait on the same connection again soon once this wait is over (a thread that reads
    /// a channel value after value, <see cref="FrameChannel.WaitReceiving"/>): a transport may then leave its receiving
    /// lent to that thread for a moment instead of handing it back to its receiving thread at once, so a frame that
    /// arrives meanwhile wakes nobody and is read when the thread comes back, or by the receiving thread after about a
    /// millisecond when it does not.
    /// </summary>
    bool ComesBack => false;
}
