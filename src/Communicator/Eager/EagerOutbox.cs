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
    // world's start): a ring write waits until the peer's delivered count has caught up with it.
    private readonly object _lock = new();
    private readonly MemoryMappedFile _file;
    private readonly MemoryMappedViewAccessor _view;
    private readonly byte* _base;
    private readonly EagerRing _ring;
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
