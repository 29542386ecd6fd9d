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

    /// <summary>The most values one batch carries.</summary>
    internal const int BatchSize = 256;

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
    private int _credits;
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
        _credits = grant.Credits;
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
        if (Unconfirmed.Count > (_listed ? 1 : 0))
        {
            // Values written to other channels are in their buffers before this one is written.
            Unconfirmed.ConfirmAll(except: this);
        }
        lock (_gate)
        {
            ThrowIfEndedUnsynchronized();
            if (_credits == 0)
            {
                return false;
            }
            _credits--;
            _writes++;
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
            return true;
        }
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
            if (_lost is not null || _fault is not null || _status != 0 || _credits > 0)
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
            if (_count == 0 && (!_shared || _credits == 0))
            {
                // A full batch went out and nothing waits in the next one, nor are credits to give back: the
                // next write queues a flush again. So a writer that keeps writing costs one pool item per batch.
                _flushQueued = false;
                return;
            }
            if (_writes != _writesSeen)
            {
                _writesSeen = _writes;
                ThreadPool.UnsafeQueueUserWorkItem(s_autoFlush, this, preferLocal: false);
                return;
            }
            _flushQueued = false;
            if (_lost is not null)
            {
                return;
            }
            int returned = _shared && _status == 0 ? _credits : 0;
            try
            {
                FlushUnsynchronized(returned);
                _credits -= returned;
            }
            catch (Cluster.RankFailedException)
            {
                // Kept in _lost: the next write throws it.
            }
        }
    }

    private void AddUnsynchronized(WriterGrant grant)
    {
        _credits += grant.Credits;
        if (grant.Poison != 0 && _status == 0)
        {
            _status = grant.Poison;
        }
        if (_credits > 0 || _status != 0)
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
                WriterGrant grant = await _link.Host.StandingCreditsAsync(_link.Id, _writer).ConfigureAwait(false);
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
            WriterGrant grant = await _link.Host.UrgentCreditsAsync(_link.Id, _writer).ConfigureAwait(false);
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
