using System.Buffers;
using System.Runtime.InteropServices;
using XCall.Cluster;
using XCall.Communicator.Eager;
using XCall.Runtime;

namespace XCall.Communicator;

/// <summary>
/// This rank's messages: arrived ones that no receive took yet, and posted receives that no message matched yet,
/// matched as MPI matches them (by context, source and tag, any source and any tag allowed).
/// </summary>
internal sealed class Mailbox : IMailbox
{
    // Design: _lock guards _unexpected, _posted, _probes and _failed. An arriving message takes the first posted
    // receive that accepts it, else it joins the end of _unexpected; a posted receive takes the first unexpected
    // message it accepts, else it joins the end of _posted. The messages of one source arrive in the order they
    // were sent (one connection per source, dispatched on its receiving thread), and both lists are searched
    // from their start, so messages of one source and tag are received in the order sent (MPI's non-overtaking
    // rule). A source on this node also writes small messages into the eager inbox: a message that comes as a call
    // drains its source's ring first (everything written there was sent before it), and the sender writes into
    // the ring only once its one-way calls have all arrived (EagerRing's delivered count), so the two ways merge
    // in send order. Copies into a receive's buffer and completions run outside the lock: a request that left _posted
    // belongs to the thread that took it. A lent message (see EagerInbox) waits in _unexpected as an envelope with
    // no bytes; whoever takes it out of the list copies its bytes from the sender and answers the sender, so it is
    // answered once: by the receive that takes it, or by Nudge (the sender waited too long), which holds a copy.
    // A blocking receive may take a held message with no request (TryTakeHeld) only while no receive is posted, so
    // receives still match in the order posted; _arrivals counts held messages so a spinning one reads one word.
    // TryTakeHeld first reads the three collections' counts without the lock: when all are 0 it has nothing to take
    // and nothing to post for, and a message, receive or failure another thread adds meanwhile is as if it came just
    // after (the inbox looks at _arrivals again before it takes a ring record; a posted receive reports a failure).
    private readonly object _lock = new();
    private readonly List<Envelope> _unexpected = [];
    private readonly List<ReceiveRequest> _posted = [];
    private readonly List<(int Source, long Context, int Tag, TaskCompletionSource<MessageStatus> Found)> _probes = [];
    private readonly Dictionary<int, RankFailedException> _failed = [];
    private bool _closed; // the world was left: every receive and probe fails (written under _lock)
    private XCallConnection?[] _links = []; // by world rank: the connection its messages came over (written under _lock)
    private EagerInbox? _inbox;
    private int _arrivals; // messages held so far (written under _lock): a spinning receive looks into the lists again only when it moved
    private int _self = -1;
    private int _worldSize;

    /// <summary>Tells the mailbox this rank's world rank and the world's size, once the world is joined.</summary>
    public void Join(int self, int worldSize)
    {
        lock (_lock)
        {
            _self = self;
            _worldSize = worldSize;
            Array.Resize(ref _links, worldSize);
        }
    }

    /// <summary>The eager inbox whose records join this mailbox (null: none, or left).</summary>
    public void AttachInbox(EagerInbox? inbox) => Volatile.Write(ref _inbox, inbox);

    public string? InboxPath() => Volatile.Read(ref _inbox)?.Path;

    /// <summary>Reads what <paramref name="source"/> wrote into the eager inbox, and takes a copy of every message it lent that no receive took yet (it waits for their answers).</summary>
    public void Nudge(int source)
    {
        EagerInbox? inbox = Volatile.Read(ref _inbox);
        inbox?.Drain(source);
        List<(long Number, LentAnswer Answer)>? answers = null;
        lock (_lock)
        {
            for (int i = 0; i < _unexpected.Count; i++)
            {
                if (_unexpected[i] is { Lent: { } message } envelope && envelope.Source == source)
                {
                    // Copied under the lock: no receive may take the message meanwhile, and its place in the list is kept.
                    byte[] data = ArrayPool<byte>.Shared.Rent(message.Length);
                    LentAnswer answer = Read(source, message, data.AsSpan(0, message.Length), out _);
                    if (answer == LentAnswer.Taken)
                    {
                        _unexpected[i] = new Envelope(source, envelope.Context, envelope.Tag, data, null, message.Length, pooled: true);
                    }
                    else
                    {
                        ArrayPool<byte>.Shared.Return(data);
                        _unexpected.RemoveAt(i--);
                    }
                    (answers ??= []).Add((message.Number, answer));
                }
            }
        }
        foreach ((long number, LentAnswer answer) in answers ?? [])
        {
            inbox?.Answer(source, number, answer); // outside the lock: it may open the sender's inbox, a call
        }
    }

    /// <summary>A message lent by <paramref name="source"/>, a rank on this node: the first posted receive that accepts it copies it, else it waits without its bytes.</summary>
    public void ArriveLent(int source, long context, LentMessage lent)
    {
        ReceiveRequest? request;
        lock (_lock)
        {
            request = TakePostedUnsynchronized(source, context, lent.Tag);
            if (request is null)
            {
                ArriveUnsynchronized(new Envelope(source, context, lent));
                return;
            }
        }
        HandLent(source, lent, request);
    }

    /// <summary>Copies a lent message into the receive that took it and answers its sender.</summary>
    private void HandLent(int source, LentMessage lent, ReceiveRequest request)
    {
        Span<byte> destination;
        try
        {
            destination = request.Destination(source, lent.Tag, lent.Length);
        }
        catch (MessageTruncatedException e)
        {
            Volatile.Read(ref _inbox)?.Answer(source, lent.Number, LentAnswer.Taken); // the send is over; its receive fails
            request.Fail(e);
            return;
        }
        EagerInbox? inbox = Volatile.Read(ref _inbox);
        inbox?.Claim(source, lent.Number);
        LentAnswer answer = Read(source, lent, destination, out Exception? error);
        inbox?.Answer(source, lent.Number, answer);
        if (error is not null)
        {
            request.Fail(error);
        }
        else
        {
            request.Complete(new MessageStatus(source, lent.Tag, lent.Length));
        }
    }

    /// <summary>Copies a lent message's bytes from its sender's memory; the answer for the sender, and the receive's error when it failed.</summary>
    private static LentAnswer Read(int source, LentMessage lent, Span<byte> destination, out Exception? error)
    {
        if (Transport.Shm.Interop.ProcessMemory.TryRead(lent.Pid, lent.Address, destination, out int errno))
        {
            error = null;
            return LentAnswer.Taken;
        }
        error = errno == Transport.Shm.Interop.ProcessMemory.NoSuchProcess
            ? new RankFailedException(source, "its process ended before its message was read")
            : new IOException($"Cannot read the {lent.Length}-byte message rank {source} lent (errno {errno}).");
        return LentAnswer.Failed;
    }

    /// <summary>Whether an asynchronous receive or a probe waits for a message (the inbox's progress thread polls then).</summary>
    public bool HasAsyncWaiters
    {
        get
        {
            lock (_lock)
            {
                return _probes.Count > 0 || _posted.Exists(r => r.IsAsync);
            }
        }
    }

    /// <summary>
    /// The connection the messages of world rank <paramref name="source"/> come over (for any source, the one peer's
    /// in a world of two), once one of its messages came; null when not known.
    /// </summary>
    public XCallConnection? LinkFor(int source)
    {
        XCallConnection?[] links = Volatile.Read(ref _links);
        if (source == Communicator.AnySource)
        {
            source = _worldSize == 2 ? 1 - _self : -1;
        }
        return (uint)source < (uint)links.Length ? Volatile.Read(ref links[source]) : null;
    }

    /// <summary>Notes the connection the message of <paramref name="source"/> being dispatched on this thread came over.</summary>
    private void NoteLinkUnsynchronized(int source)
    {
        if ((uint)source < (uint)_links.Length && source != _self && XCallConnection.Current is { } link && !ReferenceEquals(_links[source], link))
        {
            Volatile.Write(ref _links[source], link);
        }
    }

    /// <summary>Posts <paramref name="request"/>: it completes now when a waiting message matches, else when one arrives.</summary>
    public void Receive(ReceiveRequest request)
    {
        Envelope? found = null;
        lock (_lock)
        {
            if (_closed)
            {
                request.Fail(ClosedError());
                return;
            }
            int index = 0;
            while (index < _unexpected.Count && !request.Accepts(_unexpected[index].Source, _unexpected[index].Context, _unexpected[index].Tag))
            {
                index++;
            }
            if (index < _unexpected.Count)
            {
                found = _unexpected[index];
                _unexpected.RemoveAt(index);
            }
            else if (FailureFor(request.Source) is { } failure)
            {
                request.Fail(new RankFailedException(failure.Rank, failure.Reason, failure));
                return;
            }
            else
            {
                _posted.Add(request);
            }
        }
        if (found is not null)
        {
            Hand(found, request);
        }
        else if (request.IsAsync)
        {
            Volatile.Read(ref _inbox)?.WantProgress();
        }
    }

    /// <summary>
    /// A blocking receive's try before it posts a request: takes the first waiting message that
    /// <paramref name="source"/>, <paramref name="context"/> and <paramref name="tag"/> accept into
    /// <paramref name="destination"/> when the mailbox holds its bytes; no request and no allocation. Says
    /// <see cref="FastTake.Post"/> when the receive must be posted instead (a lent message matches, a receive is
    /// already posted and matching goes in posting order, or the source failed).
    /// </summary>
    /// <exception cref="MessageTruncatedException">The message is longer than <paramref name="destination"/> (it is taken, as a posted receive takes it).</exception>
    public FastTake TryTakeHeld(int source, long context, int tag, Span<byte> destination, out MessageStatus status)
    {
        status = default;
        if (_unexpected.Count == 0 && _posted.Count == 0 && _failed.Count == 0 && !_closed)
        {
            return FastTake.None; // read without the lock: see the design note
        }
        Envelope? found = null;
        lock (_lock)
        {
            if (_posted.Count != 0 || _closed)
            {
                return FastTake.Post; // a closed mailbox fails the posted receive
            }
            for (int i = 0; i < _unexpected.Count; i++)
            {
                Envelope candidate = _unexpected[i];
                if (Matches(source, context, tag, candidate))
                {
                    if (candidate.Lent is not null)
                    {
                        return FastTake.Post;
                    }
                    found = candidate;
                    _unexpected.RemoveAt(i);
                    break;
                }
            }
            if (found is null)
            {
                return FailureFor(source) is null ? FastTake.None : FastTake.Post;
            }
        }
        try
        {
            if (found.Length > destination.Length)
            {
                throw new MessageTruncatedException(found.Source, found.Tag, found.Length, destination.Length);
            }
            found.Data.AsSpan(0, found.Length).CopyTo(destination);
        }
        finally
        {
            found.Matched?.TrySetResult();
            if (found.Pooled)
            {
                ArrayPool<byte>.Shared.Return(found.Data);
            }
        }
        status = new MessageStatus(found.Source, found.Tag, found.Length);
        return FastTake.Taken;
    }

    /// <summary>Tests: the receives posted that no message matched yet.</summary>
    internal int PostedReceives
    {
        get
        {
            lock (_lock)
            {
                return _posted.Count;
            }
        }
    }

    /// <summary>How many messages the mailbox has held so far (any thread may read it): a receive that found nothing need not look again until it changes.</summary>
    public int Arrivals => Volatile.Read(ref _arrivals);

    /// <summary>Withdraws a posted receive that no message matched yet; false when one did.</summary>
    public bool Cancel(ReceiveRequest request)
    {
        lock (_lock)
        {
            return _posted.Remove(request);
        }
    }

    /// <summary>The status of the first waiting message that matches, without taking it; null when none waits.</summary>
    public MessageStatus? TryProbe(int source, long context, int tag)
    {
        Volatile.Read(ref _inbox)?.Poll();
        lock (_lock)
        {
            if (_closed)
            {
                throw ClosedError();
            }
            Envelope? found = _unexpected.Find(e => Matches(source, context, tag, e));
            if (found is null && FailureFor(source) is { } failure)
            {
                throw new RankFailedException(failure.Rank, failure.Reason, failure);
            }
            return found is null ? null : new MessageStatus(found.Source, found.Tag, found.Length);
        }
    }

    /// <summary>Completes with the status of the first message that matches, once one waits (without taking it).</summary>
    public Task<MessageStatus> ProbeAsync(int source, long context, int tag, CancellationToken cancellationToken)
    {
        var found = new TaskCompletionSource<MessageStatus>(TaskCreationOptions.RunContinuationsAsynchronously);
        EagerInbox? inbox = Volatile.Read(ref _inbox);
        inbox?.Poll();
        lock (_lock)
        {
            if (_closed)
            {
                return Task.FromException<MessageStatus>(ClosedError());
            }
            Envelope? waiting = _unexpected.Find(e => Matches(source, context, tag, e));
            if (waiting is not null)
            {
                return Task.FromResult(new MessageStatus(waiting.Source, waiting.Tag, waiting.Length));
            }
            if (FailureFor(source) is { } failure)
            {
                return Task.FromException<MessageStatus>(new RankFailedException(failure.Rank, failure.Reason, failure));
            }
            _probes.Add((source, context, tag, found));
        }
        inbox?.WantProgress();
        if (cancellationToken.CanBeCanceled)
        {
            cancellationToken.Register(() =>
            {
                lock (_lock)
                {
                    _probes.RemoveAll(p => p.Found == found);
                }
                found.TrySetCanceled(cancellationToken);
            });
        }
        return found.Task;
    }

    /// <summary>
    /// The world is being left: fails every receive and probe that waits (another thread of this rank may block in
    /// one) with <see cref="ObjectDisposedException"/>, as every later one fails.
    /// </summary>
    public void Close()
    {
        List<ReceiveRequest> receives;
        List<TaskCompletionSource<MessageStatus>> probes;
        lock (_lock)
        {
            _closed = true;
            receives = [.. _posted];
            _posted.Clear();
            probes = [.. _probes.Select(p => p.Found)];
            _probes.Clear();
        }
        foreach (ReceiveRequest request in receives)
        {
            request.Fail(ClosedError());
        }
        foreach (TaskCompletionSource<MessageStatus> probe in probes)
        {
            probe.TrySetException(ClosedError());
        }
    }

    private static ObjectDisposedException ClosedError() =>
        new(nameof(Communicator), "This rank left its world (the communicator was disposed) while the receive or probe waited, or before it began.");

    /// <summary>Fails every receive and probe waiting for the failed rank or for any source; later ones fail at once (unless a message from it already waits).</summary>
    public void FailRank(RankFailedException failure)
    {
        List<ReceiveRequest> failedReceives;
        List<TaskCompletionSource<MessageStatus>> failedProbes;
        lock (_lock)
        {
            _failed.TryAdd(failure.Rank, failure);
            _unexpected.RemoveAll(e => e.Source == failure.Rank && e.Lent is not null); // their bytes are gone with the rank
            failedReceives = _posted.FindAll(r => r.Source == failure.Rank || r.Source == Communicator.AnySource);
            _posted.RemoveAll(failedReceives.Contains);
            failedProbes = [.. _probes.Where(p => p.Source == failure.Rank || p.Source == Communicator.AnySource).Select(p => p.Found)];
            _probes.RemoveAll(p => failedProbes.Contains(p.Found));
        }
        foreach (ReceiveRequest request in failedReceives)
        {
            request.Fail(new RankFailedException(failure.Rank, failure.Reason, failure));
        }
        foreach (TaskCompletionSource<MessageStatus> probe in failedProbes)
        {
            probe.TrySetException(new RankFailedException(failure.Rank, failure.Reason, failure));
        }
    }

    /// <summary>A small message; it arrives array-backed (a remote call reads it into a new array), and the mailbox keeps that array.</summary>
    public void Post(int source, long context, int tag, ReadOnlyMemory<byte> payload)
    {
        byte[] data = MemoryMarshal.TryGetArray(payload, out ArraySegment<byte> whole) && whole.Offset == 0 && whole.Count == whole.Array!.Length
            ? whole.Array : payload.ToArray();
        EagerInbox? inbox = Volatile.Read(ref _inbox);
        inbox?.Drain(source); // what the sender wrote into the inbox before this message comes first
        Arrive(source, context, tag, data, null, null);
        inbox?.CountDelivered(source);
        inbox?.SmallArrived(source);
    }

    public Task PostSyncAsync(int source, long context, int tag, byte[] payload, CancellationToken cancellationToken)
    {
        var matched = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var envelope = new Envelope(source, context, tag, payload, matched);
        EagerInbox? inbox = Volatile.Read(ref _inbox);
        inbox?.Drain(source);
        Arrive(source, context, tag, payload, matched, envelope);
        inbox?.CountDelivered(source);
        if (!matched.Task.IsCompleted && cancellationToken.CanBeCanceled)
        {
            // The sender gave up before a receive matched: the message is withdrawn, unless a receive took it first.
            cancellationToken.Register(() =>
            {
                bool withdrawn;
                lock (_lock)
                {
                    withdrawn = _unexpected.Remove(envelope);
                }
                if (withdrawn)
                {
                    matched.TrySetCanceled(cancellationToken);
                }
            });
        }
        return matched.Task;
    }

    public void DeliverBytes(int source, long context, int tag, LentSpan<byte> payload) => DeliverCounted(source, context, tag, payload);

    public void DeliverInt32s(int source, long context, int tag, LentSpan<int> payload) => DeliverCounted(source, context, tag, payload);

    public void DeliverInt64s(int source, long context, int tag, LentSpan<long> payload) => DeliverCounted(source, context, tag, payload);

    public void DeliverSingles(int source, long context, int tag, LentSpan<float> payload) => DeliverCounted(source, context, tag, payload);

    public void DeliverDoubles(int source, long context, int tag, LentSpan<double> payload) => DeliverCounted(source, context, tag, payload);

    /// <summary>A large message: copied once, straight into the matching receive's buffer, or into an envelope when no receive waits.</summary>
    private unsafe void Deliver<T>(int source, long context, int tag, LentSpan<T> payload) where T : unmanaged
    {
        int bytes = payload.Length * sizeof(T);
        Volatile.Read(ref _inbox)?.Drain(source);
        ReceiveRequest? request;
        lock (_lock)
        {
            NoteLinkUnsynchronized(source);
            request = TakePostedUnsynchronized(source, context, tag);
            if (request is null)
            {
                // No receive waits yet (it is often about to be posted): a pooled array holds the message, with no
                // zeroing or fresh pages for it.
                byte[] data = ArrayPool<byte>.Shared.Rent(bytes);
                payload.CopyTo(MemoryMarshal.Cast<byte, T>(data.AsSpan(0, bytes)));
                ArriveUnsynchronized(new Envelope(source, context, tag, data, null, bytes, pooled: true));
                return;
            }
        }
        try
        {
            Span<byte> destination = request.Destination(source, tag, bytes);
            payload.CopyTo(MemoryMarshal.Cast<byte, T>(destination));
        }
        catch (MessageTruncatedException e)
        {
            request.Fail(e);
            return;
        }
        request.Complete(new MessageStatus(source, tag, bytes));
    }

    /// <summary>A large message: delivered as <see cref="Deliver{T}(int, long, int, LentSpan{T})"/> says, then counted as arrived for the inbox.</summary>
    private void DeliverCounted<T>(int source, long context, int tag, LentSpan<T> payload) where T : unmanaged
    {
        try
        {
            Deliver(source, context, tag, payload);
        }
        finally
        {
            Volatile.Read(ref _inbox)?.LargeArrived(source);
        }
    }

    /// <summary>A message arrives: the first posted receive that accepts it takes it, else it is held (as <paramref name="held"/>
    /// when given, else in a new envelope; no envelope is made for a message a receive takes).</summary>
    private void Arrive(int source, long context, int tag, byte[] data, TaskCompletionSource? matched, Envelope? held)
    {
        ReceiveRequest? request;
        lock (_lock)
        {
            NoteLinkUnsynchronized(source);
            request = TakePostedUnsynchronized(source, context, tag);
            if (request is null)
            {
                ArriveUnsynchronized(held ?? new Envelope(source, context, tag, data, matched));
                return;
            }
        }
        Hand(source, tag, data, data, matched, request);
    }

    /// <summary>A small message read from the eager inbox: copied into the receive that matches it, or into a new envelope.</summary>
    public void ArriveEager(int source, long context, int tag, ReadOnlySpan<byte> payload)
    {
        ReceiveRequest? request;
        lock (_lock)
        {
            request = TakePostedUnsynchronized(source, context, tag);
            if (request is null)
            {
                ArriveUnsynchronized(new Envelope(source, context, tag, payload.ToArray(), null));
                return;
            }
        }
        Hand(source, tag, payload, null, null, request);
    }

    private ReceiveRequest? TakePostedUnsynchronized(int source, long context, int tag)
    {
        for (int i = 0; i < _posted.Count; i++)
        {
            ReceiveRequest request = _posted[i];
            if (request.Accepts(source, context, tag))
            {
                _posted.RemoveAt(i);
                return request;
            }
        }
        return null;
    }

    private void ArriveUnsynchronized(Envelope envelope)
    {
        _unexpected.Add(envelope);
        Volatile.Write(ref _arrivals, _arrivals + 1);
        for (int i = _probes.Count - 1; i >= 0; i--)
        {
            (int source, long context, int tag, TaskCompletionSource<MessageStatus> found) = _probes[i];
            if (Matches(source, context, tag, envelope))
            {
                _probes.RemoveAt(i);
                found.TrySetResult(new MessageStatus(envelope.Source, envelope.Tag, envelope.Length));
            }
        }
    }

    /// <summary>Gives a held message to the receive that matched it.</summary>
    private void Hand(Envelope envelope, ReceiveRequest request)
    {
        if (envelope.Lent is { } lent)
        {
            HandLent(envelope.Source, lent, request);
            return;
        }
        Hand(envelope.Source, envelope.Tag, envelope.Data.AsSpan(0, envelope.Length), envelope.Pooled ? null : envelope.Data, envelope.Matched, request);
        if (envelope.Pooled)
        {
            ArrayPool<byte>.Shared.Return(envelope.Data);
        }
    }

    /// <summary>Gives a message to the receive that matched it (<paramref name="whole"/>: its bytes as an array the receive may keep,
    /// if they are one); <paramref name="matched"/> is its sender's wait (a synchronous send), if any.</summary>
    private static void Hand(int source, int tag, ReadOnlySpan<byte> data, byte[]? whole, TaskCompletionSource? matched, ReceiveRequest request)
    {
        if (whole is null || !request.TryTake(whole))
        {
            try
            {
                data.CopyTo(request.Destination(source, tag, data.Length));
            }
            catch (MessageTruncatedException e)
            {
                matched?.TrySetResult();
                request.Fail(e);
                return;
            }
        }
        matched?.TrySetResult();
        request.Complete(new MessageStatus(source, tag, data.Length));
    }

    private static bool Matches(int source, long context, int tag, Envelope e) =>
        e.Context == context && (source == Communicator.AnySource || source == e.Source) && (tag == Communicator.AnyTag || tag == e.Tag);

    private RankFailedException? FailureFor(int source)
    {
        if (source == Communicator.AnySource)
        {
            return _failed.Count > 0 ? _failed.Values.First() : null;
        }
        return _failed.GetValueOrDefault(source);
    }
}

/// <summary>What a blocking receive's try without a request found (see <see cref="Mailbox.TryTakeHeld"/>).</summary>
internal enum FastTake
{
    /// <summary>No message matches yet: try again, or post the receive.</summary>
    None,

    /// <summary>A message was copied into the receive's buffer.</summary>
    Taken,

    /// <summary>The receive must be posted as a request.</summary>
    Post,
}
