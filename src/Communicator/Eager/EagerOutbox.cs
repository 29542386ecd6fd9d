using System.IO.MemoryMappedFiles;

namespace XCall.Communicator.Eager;

/// <summary>
/// This rank's way into one node-local peer's <see cref="EagerInbox"/>: the peer's file mapped here, and the ring
/// this rank writes in it. Small messages go through it while the peer's delivered count says no message of ours
/// that went as a call is still on its way (see <see cref="EagerRing"/>).
/// </summary>
internal sealed unsafe class EagerOutbox : IDisposable
{
    // Design: _lock makes this rank's threads one producer of the ring and guards _disposed. The caller passes
    // the count of messages to the peer that went as one-way calls (incremented before each is sent, from the
    // world's start): a ring write waits until the peer's delivered count has caught up with it. _lending is set
    // while a lent message waits for its answer (one at a time per ring, see EagerRing); _lendRefused once the peer
    // refused one (it cannot read this process's memory), after which nothing is lent to it.
    private readonly object _lock = new();
    private readonly MemoryMappedFile _file;
    private readonly MemoryMappedViewAccessor _view;
    private readonly byte* _base;
    private readonly EagerRing _ring;
    private long _lent;
    private bool _lending;
    private bool _lendRefused;
    private bool _disposed;

    private EagerOutbox(MemoryMappedFile file, MemoryMappedViewAccessor view, int self)
    {
        _file = file;
        _view = view;
        byte* pointer = null;
        view.SafeMemoryMappedViewHandle.AcquirePointer(ref pointer);
        _base = pointer + view.PointerOffset;
        _ring = EagerInbox.RingAt(_base, self);
    }

    /// <summary>Maps the inbox at <paramref name="path"/> (a peer's, of a world of <paramref name="worldSize"/>) for world rank <paramref name="self"/>; null when it cannot be opened.</summary>
    public static EagerOutbox? TryOpen(string path, int self, int worldSize)
    {
        long bytes = EagerInbox.HeaderBytes + ((long)worldSize * EagerRing.Bytes);
        try
        {
            using var stream = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete);
            if (stream.Length != bytes)
            {
                return null;
            }
            MemoryMappedFile file = MemoryMappedFile.CreateFromFile(stream, null, bytes, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: false);
            var outbox = new EagerOutbox(file, file.CreateViewAccessor(0, bytes, MemoryMappedFileAccess.ReadWrite), self);
            EagerInbox.CountOpener(outbox._base, path);
            return outbox;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    /// <summary>Tests: the messages written into the peer's ring.</summary>
    public long Sent { get; private set; }

    /// <summary>Writes a message into the peer's ring and rings its bell if it sleeps; false when it must go as a call.</summary>
    /// <param name="context">The message's context.</param>
    /// <param name="tag">The message's tag.</param>
    /// <param name="payload">The message's bytes.</param>
    /// <param name="postsSent">The messages to the peer that went as one-way calls so far.</param>
    /// <param name="nudge">Set when the message was written just as the reader went to sleep on the calls' connection: send it a nudge.</param>
    public bool TrySend(long context, int tag, ReadOnlySpan<byte> payload, long postsSent, out bool nudge)
    {
        lock (_lock)
        {
            nudge = false;
            if (_disposed || _ring.ReaderInCalls || _ring.Delivered != postsSent || !_ring.TryWrite(context, tag, payload))
            {
                return false;
            }
            EagerInbox.Ring(_base); // a full fence, then the bell
            nudge = _ring.ReaderInCalls;
            Sent++;
            return true;
        }
    }

    /// <summary>Tests: the messages lent to the peer (and answered Taken or not yet answered).</summary>
    public long Lent => Volatile.Read(ref _lent);

    /// <summary>
    /// Lends the message of <paramref name="length"/> bytes at <paramref name="address"/> (pinned by the caller until
    /// <see cref="EndLend"/>) to the peer: writes its record and rings the bell; false when it must go another way (one
    /// already waits for its answer, the peer refused one, the ring is full, or its one-way calls are not all in).
    /// </summary>
    /// <param name="context">The message's context.</param>
    /// <param name="tag">The message's tag.</param>
    /// <param name="address">Where the message's bytes are in this process.</param>
    /// <param name="length">The message's length in bytes.</param>
    /// <param name="postsSent">The messages to the peer that went as one-way calls so far.</param>
    /// <param name="number">The lent message's number, which its answer carries.</param>
    /// <param name="nudge">Set when the record was written just as the reader went to sleep on the calls' connection: send it a nudge.</param>
    public bool TryLend(long context, int tag, ulong address, int length, long postsSent, out long number, out bool nudge)
    {
        Span<byte> record = stackalloc byte[LentMessage.Bytes];
        lock (_lock)
        {
            nudge = false;
            number = _lent + 1;
            if (_disposed || _lending || _lendRefused || _ring.ReaderInCalls || _ring.Delivered != postsSent)
            {
                return false;
            }
            new LentMessage(tag, Environment.ProcessId, address, length, number).Write(record);
            if (!_ring.TryWrite(context, EagerRing.LendTag, record))
            {
                return false;
            }
            _lent = number;
            _lending = true;
            EagerInbox.Ring(_base);
            nudge = _ring.ReaderInCalls;
            return true;
        }
    }

    /// <summary>The peer's answer to lent message <paramref name="number"/> (<see cref="LentAnswer.None"/> until it comes).</summary>
    public LentAnswer AnswerTo(long number)
    {
        lock (_lock)
        {
            return _disposed ? LentAnswer.None : _ring.AnswerTo(number);
        }
    }

    /// <summary>Whether the peer started copying lent message <paramref name="number"/>: its answer follows.</summary>
    public bool Claimed(long number)
    {
        lock (_lock)
        {
            return !_disposed && _ring.Claimed(number);
        }
    }

    /// <summary>The lent message's wait is over (answered with <paramref name="answer"/>, or given up): another may be lent.</summary>
    public void EndLend(LentAnswer answer)
    {
        lock (_lock)
        {
            _lending = false;
            _lendRefused |= answer == LentAnswer.Refused;
        }
    }

    /// <summary>Wakes the peer's reader if it sleeps on its bell (its lent message was answered).</summary>
    public void RingBell()
    {
        lock (_lock)
        {
            if (!_disposed)
            {
                EagerInbox.Ring(_base);
            }
        }
    }

    /// <summary>Announces large message number <paramref name="number"/> (counted from 1) about to go to the peer as a call
    /// (an empty marker record), so its waiting receive reads that call's connection; skipped when the ring is full.</summary>
    public void Announce(long number)
    {
        lock (_lock)
        {
            if (!_disposed && _ring.TryWrite(number, EagerRing.LargeMarkerTag, default))
            {
                EagerInbox.Ring(_base);
            }
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }
            _disposed = true;
            _view.SafeMemoryMappedViewHandle.ReleasePointer();
            _view.Dispose();
            _file.Dispose();
        }
    }
}
