using System.Buffers;

namespace XCall.Channels.Distributed;

/// <summary>
/// The writes of a remote end of a buffered named channel. The end holds credits, free slots of the channel's buffer
/// its host granted (<see cref="Intake{T}"/>): a write with a credit goes into a batch and returns at once, as an
/// in-process write to a buffer with room does; without one it waits for the host to grant more. A batch travels as
/// one one-way call when it is full, before the writer waits for credits, before a poison or completion, and when
/// the writer pauses (a flush scheduled on the thread pool with the batch's first value finds no newer write), so
/// a lone write reaches the reader without any further one.
/// </summary>
internal sealed class CreditWriter<T> : IConfirmable
{
    // Design: _gate guards every field. Batches are sent under it, numbered in order; the host puts them into the
    // channel in that order whatever order its dispatch runs them in. Credits come from answers to requests, added
    // under _gate. A lone writer keeps one request out always (PollAsync): the host answers it when a quarter of
    // the buffer is free, or with the channel's end. A writer that runs out makes an urgent request (answered at the
    // first free slot) and waits for it; the writers of a shared channel (Any2One, Any2Any) make only those, and
    // give their unused credits back when they pause, so credits idle in one writer never hold another up.
    //
    // Design of the biased fast path (a lone writer's values skip _gate): the batch state (_count, _words,
    // _creditsUsed, _writes, and reads of _listed and _flushQueued) belongs either to the thread in _owner while it is
    // inside the fast path (_inFast 1) or to whoever holds _gate once the bias is off. A write from _owner stores
    // _inFast = 1, then reads _owner again and writes without _gate only if it still owns the bias; any other thread
    // that takes _gate to touch that state first revokes: it clears _owner, runs a process-wide memory barrier
    // (Interlocked.MemoryBarrierProcessWide, so that store-load pair needs no fence on the owner's side: either the
    // owner's _inFast = 1 is visible after the barrier or its second read of _owner sees 0) and waits for _inFast = 0.
    // The owner's own slow path (under _gate) needs no revocation: its fast path is not running then. _creditsAdded
    // only grows, under _gate, so the fast path reads it without revoking; every change of _status, _lost, _fault
    // drops the bias (the owner's too), so a write after the writer heard of the channel's end throws as on the slow
    // path. The fast path never fills a batch nor starts one (the first value queues the pause flush, the last sends
    // the batch: both under _gate). The bias goes to the thread whose write takes the slow path; writers of a shared
    // channel never hold it, and after MaxStolenBiases revocations by other writing threads (threads taking turns on
    // one end) it is never given again, so the barrier's cost stays off the per-value path. A pause flush that finds
    // the writer still writing looks again later without revoking; one that finds it paused revokes (one barrier per
    // pause).

    /// <summary>The most values one batch carries.</summary>
    internal const int BatchSize = 256;

    /// <summary>How many times other writing threads may take the bias from its owner before it is never given again.</summary>
    private const int MaxStolenBiases = 8;

    private static readonly Action<CreditWriter<T>> s_autoFlush = static writer => writer.AutoFlush();

    private readonly Lock _gate = new();
    private readonly HostLink _link;
    private readonly ChannelCodec<T> _codec;
    private readonly int _writer;
    private readonly bool _shared;
    private readonly long[]? _words;
    private readonly ArrayBufferWriter<byte>? _bytes;
    private readonly int[]? _lengths;
    private int _count;
    private long _creditsAdded;
    private long _creditsUsed;
    private int _owner;
    private int _inFast;
    private int _stolenBiases;
    private long _sequence;
    private long _writes;
    private long _writesSeen = -1;
    private bool _flushQueued;
    private bool _urgentOut;
    private TaskCompletionSource? _waiter;
    private int _status;
    private XCallDisconnectedException? _lost;
    private Exception? _fault;
    private long _confirmed;
    private bool _listed;

    public CreditWriter(HostLink link, ChannelCodec<T> codec, WriterGrant grant, bool shared)
    {
        _link = link;
        _codec = codec;
        _writer = grant.Writer;
        _shared = shared;
        _creditsAdded = grant.Credits;
        _status = grant.Poison;
        if (codec.IsWord)
        {
            _words = new long[BatchSize];
        }
        else
        {
            _bytes = new ArrayBufferWriter<byte>(1024);
            _lengths = new int[BatchSize];
        }
        if (!shared)
        {
            _ = PollAsync();
        }
    }

    /// <summary>Writes <paramref name="item"/> with a credit; false when there is none (then <see cref="WaitForCreditsAsync"/>).</summary>
    /// <exception cref="PoisonException">The channel is poisoned.</exception>
    /// <exception cref="System.Threading.Channels.ChannelClosedException">The channel is completed.</exception>
    /// <exception cref="Cluster.RankFailedException">The host is gone.</exception>
    public bool TryWrite(T item)
    {
        int thread = Environment.CurrentManagedThreadId;
        if (Volatile.Read(ref _owner) == thread && TryWriteBiased(item, thread))
        {
            return true;
        }
        if (Unconfirmed.Count > (_listed ? 1 : 0))
        {
            // Values written to other channels are in their buffers before this one is written.
            Unconfirmed.ConfirmAll(except: this);
        }
        lock (_gate)
        {
            TakeStateUnsynchronized(thread, write: true);
            ThrowIfEndedUnsynchronized();
            if (CreditsUnsynchronized == 0)
            {
                return false;
            }
            _creditsUsed++;
            Volatile.Write(ref _writes, _writes + 1);
            if (!_listed)
            {
                _listed = true;
                Unconfirmed.Add(this);
            }
            if (_words is not null)
            {
                _words[_count] = _codec.ToWord(item);
            }
            else
            {
                byte[] value = _codec.ToBytes(item);
                _bytes!.Write(value);
                _lengths![_count] = value.Length;
            }
            if (++_count == BatchSize)
            {
                FlushUnsynchronized(returned: 0);
            }
            else if (!_flushQueued)
            {
                _flushQueued = true;
                ThreadPool.UnsafeQueueUserWorkItem(s_autoFlush, this, preferLocal: false);
            }
            if (_owner == 0 && !_shared && _words is not null && _stolenBiases < MaxStolenBiases)
            {
                Volatile.Write(ref _owner, thread);
            }
            return true;
        }
    }

    /// <summary>
    /// The owner's write without <see cref="_gate"/>: a value in the middle of a batch already listed, with a pause
    /// flush queued and a credit at hand; false (nothing written) when any of that does not hold or the bias is gone.
    /// </summary>
    private bool TryWriteBiased(T item, int thread)
    {
        Volatile.Write(ref _inFast, 1);
        // The revoking thread's barrier orders this store before the read below (see the design note).
        bool written = false;
        if (Volatile.Read(ref _owner) == thread
            && _count < BatchSize - 1
            && _flushQueued
            && _listed
            && Unconfirmed.Count == 1
            && _creditsUsed < Volatile.Read(ref _creditsAdded))
        {
            _words![_count++] = _codec.ToWord(item);
            _creditsUsed++;
            Volatile.Write(ref _writes, _writes + 1);
            written = true;
        }
        Volatile.Write(ref _inFast, 0);
        return written;
    }

    /// <summary>Credits at hand.</summary>
    private int CreditsUnsynchronized => (int)(Volatile.Read(ref _creditsAdded) - _creditsUsed);

    /// <summary>
    /// Makes the batch state this thread's to touch under <see cref="_gate"/>: revokes the bias unless this thread
    /// holds it. A <paramref name="write"/> from another thread counts toward never biasing again.
    /// </summary>
    private void TakeStateUnsynchronized(int thread, bool write)
    {
        int owner = _owner;
        if (owner == 0 || owner == thread)
        {
            return;
        }
        Volatile.Write(ref _owner, 0);
        Interlocked.MemoryBarrierProcessWide();
        SpinWait spin = default;
        while (Volatile.Read(ref _inFast) != 0)
        {
            spin.SpinOnce();
        }
        if (write)
        {
            _stolenBiases++;
        }
    }

    /// <summary><see cref="TakeStateUnsynchronized(int, bool)"/> for the current thread, not a write.</summary>
    private void TakeStateUnsynchronized() => TakeStateUnsynchronized(Environment.CurrentManagedThreadId, write: false);

    /// <summary>The channel ended for this writer (or its host is gone): no write takes the fast path any more, the owner's neither.</summary>
    private void DropBiasUnsynchronized()
    {
        TakeStateUnsynchronized();
        Volatile.Write(ref _owner, 0);
    }

    /// <summary>
    /// Sends the batch and waits until the writer holds credits, whichever request brought them (or the channel
    /// ended, or the host is gone: the next write throws that).
    /// </summary>
    public ValueTask WaitForCreditsAsync(CancellationToken cancellationToken)
    {
        Task pending;
        bool ask;
        lock (_gate)
        {
            TakeStateUnsynchronized();
            if (_lost is not null || _fault is not null || _status != 0 || CreditsUnsynchronized > 0)
            {
                return default;
            }
            try
            {
                FlushUnsynchronized(returned: 0);
            }
            catch (Cluster.RankFailedException)
            {
                return default; // Kept in _lost: the next write throws it.
            }
            ask = !_urgentOut;
            _urgentOut = true;
            pending = (_waiter ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
        }
        if (ask)
        {
            _ = UrgentAsync();
        }
        return new ValueTask(pending.WaitAsync(cancellationToken));
    }

    /// <summary>The blocking form of <see cref="WaitForCreditsAsync"/>, for a write without a cancellation token.</summary>
    public void WaitForCredits() => Blocking.Wait(WaitForCreditsAsync(CancellationToken.None));

    /// <summary>Poisons (<paramref name="strength"/> above 0) or completes (0) the channel after the values written so far.</summary>
    public void End(int strength)
    {
        lock (_gate)
        {
            TakeStateUnsynchronized();
            if (_lost is not null)
            {
                throw _link.Lost(_lost);
            }
            FlushUnsynchronized(returned: 0);
            try
            {
                _link.Host.EndAfter(_link.Id, _writer, _sequence, strength);
            }
            catch (XCallDisconnectedException e)
            {
                LostUnsynchronized(e);
                throw _link.Lost(e);
            }
            if (strength == 0)
            {
                DropBiasUnsynchronized();
                _status = HostedChannel.Completed;
            }
        }
    }

    /// <inheritdoc/>
    public async Task ConfirmAsync()
    {
        if (BeginConfirm() is not long batches)
        {
            return;
        }
        try
        {
            await _link.Host.AppliedAsync(_link.Id, _writer, batches).ConfigureAwait(false);
        }
        catch (XCallDisconnectedException e)
        {
            Confirmed(batches, e);
            return;
        }
        Confirmed(batches, null);
    }

    private void Confirmed(long batches, XCallDisconnectedException? lost)
    {
        lock (_gate)
        {
            if (lost is not null)
            {
                DropBiasUnsynchronized();
            }
            else
            {
                TakeStateUnsynchronized();
            }
            _lost ??= lost;
            _confirmed = Math.Max(_confirmed, batches);
            if (_lost is not null || (_count == 0 && _sequence == _confirmed))
            {
                UnlistUnsynchronized();
            }
        }
    }

    /// <summary>Sends the batch; the count of batches to confirm, or null when there is nothing to confirm.</summary>
    private long? BeginConfirm()
    {
        lock (_gate)
        {
            TakeStateUnsynchronized();
            if (_lost is null)
            {
                try
                {
                    FlushUnsynchronized(returned: 0);
                }
                catch (Cluster.RankFailedException)
                {
                    // Kept in _lost: the next write throws it.
                }
            }
            if (_lost is not null || _sequence == _confirmed)
            {
                UnlistUnsynchronized();
                return null;
            }
            return _sequence;
        }
    }

    private void UnlistUnsynchronized()
    {
        if (_listed)
        {
            _listed = false;
            Unconfirmed.Remove(this);
        }
    }

    private void ThrowIfEndedUnsynchronized()
    {
        if (_lost is not null)
        {
            throw _link.Lost(_lost);
        }
        if (_fault is not null)
        {
            throw new InvalidOperationException($"A credit request of the buffered channel '{_link.Name}' failed; the channel takes no more writes from this process.", _fault);
        }
        RemoteStatus.ThrowIfEnded(_status);
    }

    private void FlushUnsynchronized(int returned)
    {
        if (_count == 0 && returned == 0)
        {
            return;
        }
        try
        {
            _link.Host.WriteBatch(_link.Id, _writer, _sequence++, returned,
                _words.AsMemory(0, _words is null ? 0 : _count),
                _bytes is null ? default : _bytes.WrittenMemory,
                _lengths.AsMemory(0, _lengths is null ? 0 : _count));
        }
        catch (XCallDisconnectedException e)
        {
            LostUnsynchronized(e);
            throw _link.Lost(e);
        }
        finally
        {
            _count = 0;
            _bytes?.ResetWrittenCount();
        }
    }

    /// <summary>Flushes the batch once a pool hop passed without a write; a writer of a shared channel then gives its credits back.</summary>
    private void AutoFlush()
    {
        lock (_gate)
        {
            long writes = Volatile.Read(ref _writes);
            if (writes != _writesSeen)
            {
                // The writer is writing: look again later, without taking the bias from it.
                _writesSeen = writes;
                ThreadPool.UnsafeQueueUserWorkItem(s_autoFlush, this, preferLocal: false);
                return;
            }
            TakeStateUnsynchronized();
            _flushQueued = false;
            if (_lost is not null || (_count == 0 && (!_shared || CreditsUnsynchronized == 0)))
            {
                // Nothing waits in the batch, nor are credits to give back: the next write queues a flush again.
                return;
            }
            int returned = _shared && _status == 0 ? CreditsUnsynchronized : 0;
            try
            {
                FlushUnsynchronized(returned);
                _creditsUsed += returned;
            }
            catch (Cluster.RankFailedException)
            {
                // Kept in _lost: the next write throws it.
            }
        }
    }

    private void AddUnsynchronized(WriterGrant grant)
    {
        Volatile.Write(ref _creditsAdded, _creditsAdded + grant.Credits);
        if (grant.Poison != 0 && _status == 0)
        {
            // Writes from now on throw, the owner's too.
            DropBiasUnsynchronized();
            _status = grant.Poison;
        }
        if (CreditsUnsynchronized > 0 || _status != 0)
        {
            WakeUnsynchronized();
        }
    }

    /// <summary>Releases a write waiting for credits; it looks again (its continuation runs on the pool, not under _gate).</summary>
    private void WakeUnsynchronized()
    {
        _waiter?.TrySetResult();
        _waiter = null;
    }

    private void LostUnsynchronized(XCallDisconnectedException e)
    {
        DropBiasUnsynchronized();
        _lost ??= e;
        WakeUnsynchronized();
    }

    /// <summary>The request a lone writer keeps out: credits as the reader frees room, and the channel's end.</summary>
    private async Task PollAsync()
    {
        try
        {
            while (true)
            {
                WriterGrant grant = await _link.Host.CreditsAsync(_link.Id, _writer, urgent: false).ConfigureAwait(false);
                lock (_gate)
                {
                    AddUnsynchronized(grant);
                    if (_status != 0)
                    {
                        return;
                    }
                }
            }
        }
        catch (Exception e)
        {
            Failed(e);
        }
    }

    /// <summary>The request of a writer that ran out; its answer wakes the write, as a poll answer does.</summary>
    private async Task UrgentAsync()
    {
        try
        {
            WriterGrant grant = await _link.Host.CreditsAsync(_link.Id, _writer, urgent: true).ConfigureAwait(false);
            lock (_gate)
            {
                _urgentOut = false;
                AddUnsynchronized(grant);
            }
        }
        catch (Exception e)
        {
            Failed(e);
        }
    }

    /// <summary>A credit request failed: the writes waiting wake, and this and every later write throw it.</summary>
    private void Failed(Exception e)
    {
        lock (_gate)
        {
            DropBiasUnsynchronized();
            _urgentOut = false;
            if (e is XCallDisconnectedException lost)
            {
                _lost ??= lost;
            }
            else
            {
                _fault ??= e;
            }
            WakeUnsynchronized();
        }
    }
}
