using System.Threading.Channels;

namespace XCall.Channels.Distributed;

/// <summary>
/// The remote writers of a buffered channel this process hosts. Each writer holds credits: free slots of the buffer
/// the intake granted it, so its writes return at once, as an in-process write to a buffer with room does; it
/// sends the values in batches (<see cref="IConstructHost.WriteBatch"/>), which the intake puts into the channel in
/// each writer's order, and ends it (poison, completion) after its values. Credits are granted for free slots only:
/// the values in the buffer, the credits out and the values on their way into the channel never pass its capacity.
/// </summary>
internal sealed class Intake<T> : IIntake
{
    // Design: _lock guards the writers, the queue, _granted, _queued, _putting and _status; values are put into the
    // channel outside it, in queue order, by the one thread that set _putting, a batch's values in as few steps as the
    // channel's room allows (ChannelOut.TryWriteMany: one lock and one reader wake-up per step). A writer's batches
    // enter the queue in their sequence (a batch that comes early waits in its writer's Parked), and its end enters
    // after its last batch. _wakeAt (the least free count some waiting request needs, int.MaxValue when none) is
    // published with a full fence before the free count is read, and read after the buffer's count falls
    // (CountedBuffer), so no freed slot is missed. Requests are answered outside the lock (their continuations run
    // asynchronously anyway).

    /// <summary>The most credits out at once for a buffer without a capacity.</summary>
    internal const int Window = 65_536;

    private readonly Lock _lock = new();
    private readonly ChannelOut<T> _output;
    private readonly CountedBuffer<T> _buffer;
    private readonly int _immunity;
    private readonly List<RemoteWriter> _writers = [];
    private readonly Queue<Entry> _queue = new();
    private int _granted;
    private int _queued;
    private bool _putting;
    private int _status;
    private int _wakeAt = int.MaxValue;

    public Intake(ChannelOut<T> output, CountedBuffer<T> buffer, int immunity)
    {
        _output = output;
        _immunity = immunity;
        _buffer = buffer;
        buffer.Intake = this;
    }

    /// <summary>Registers a remote writer: its id, the credits it holds now, and the channel's end status (0 while open).</summary>
    public WriterGrant Open()
    {
        lock (_lock)
        {
            _writers.Add(new RemoteWriter());
            int writer = _writers.Count - 1;
            int credits = _status == 0 ? GrantUnsynchronized(Free()) : 0;
            return new WriterGrant(writer, credits, _status);
        }
    }

    /// <summary>
    /// Credits for <paramref name="writer"/>: at once when the buffer has room (any for an <paramref name="urgent"/>
    /// request, whose writer waits, served first; a quarter of the buffer otherwise), else when a reader frees it.
    /// Ends with the channel's status when it ends.
    /// </summary>
    public Task<WriterGrant> RequestAsync(int writer, bool urgent)
    {
        var request = new TaskCompletionSource<WriterGrant>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            Writer(writer).Requests.Add(new Request(request, urgent ? 1 : Math.Max(1, Limit / 4)));
        }
        Serve();
        return request.Task;
    }

    /// <summary>
    /// Takes batch <paramref name="sequence"/> of <paramref name="writer"/>, written with its credits, and gives back
    /// <paramref name="returned"/> credits it does not need (the writer pauses).
    /// </summary>
    public void Arrive(int writer, long sequence, T[] values, int returned)
    {
        bool put;
        lock (_lock)
        {
            RemoteWriter state = Writer(writer);
            _granted -= returned;
            if (sequence != state.Next)
            {
                (state.Parked ??= [])[sequence] = values;
                put = false;
            }
            else
            {
                EnqueueUnsynchronized(state, values);
                put = BeginPutUnsynchronized();
            }
        }
        if (put)
        {
            _ = PutAsync();
        }
    }

    /// <summary>Ends the channel for <paramref name="writer"/> once its first <paramref name="batches"/> batches are in: poison of <paramref name="strength"/>, or completion when it is 0.</summary>
    public void EndAfter(int writer, long batches, int strength)
    {
        bool put;
        lock (_lock)
        {
            RemoteWriter state = Writer(writer);
            if (batches > state.Next)
            {
                state.EndAt = batches;
                state.End = strength == 0 ? HostedChannel.Completed : strength;
                return;
            }
            _queue.Enqueue(new Entry(null, strength == 0 ? HostedChannel.Completed : strength));
            put = BeginPutUnsynchronized();
        }
        if (put)
        {
            _ = PutAsync();
        }
    }

    /// <summary>Completes once the first <paramref name="batches"/> batches of <paramref name="writer"/> are in the channel (or the channel ended).</summary>
    public Task AppliedAsync(int writer, long batches)
    {
        lock (_lock)
        {
            RemoteWriter state = Writer(writer);
            if (state.Put >= batches || _status != 0)
            {
                return Task.CompletedTask;
            }
            var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            (state.Waiting ??= []).Add((batches, done));
            return done.Task;
        }
    }

    void IIntake.OnSlotFreed()
    {
        if (Volatile.Read(ref _wakeAt) <= FreeRacy())
        {
            // Under the channel's lock: answering only queues the request's continuation.
            Serve();
        }
    }

    private int Limit => _buffer.Capacity > 0 ? _buffer.Capacity : Window;

    /// <summary>The slots no value and no credit claims (values being put count twice, so it errs low).</summary>
    private int Free() => Limit - (_buffer.Capacity > 0 ? _buffer.Held : 0) - _granted - _queued;

    private int FreeRacy() => Limit - (_buffer.Capacity > 0 ? _buffer.Held : 0) - Volatile.Read(ref _granted) - Volatile.Read(ref _queued);

    private RemoteWriter Writer(int writer) => (uint)writer < (uint)_writers.Count
        ? _writers[writer]
        : throw new ArgumentException($"This channel has no remote writer {writer}.", nameof(writer));

    /// <summary>Grants up to <paramref name="free"/> credits to one writer: all of them to a lone writer, a share when several write.</summary>
    private int GrantUnsynchronized(int free)
    {
        int grant = Math.Min(Math.Max(free, 0), _writers.Count > 1 ? Math.Max(1, Limit / _writers.Count) : int.MaxValue);
        _granted += grant;
        return grant;
    }

    private void EnqueueUnsynchronized(RemoteWriter state, T[] values)
    {
        while (true)
        {
            _granted -= values.Length;
            _queued += values.Length;
            _queue.Enqueue(new Entry(values, 0, state));
            state.Next++;
            if (state.EndAt == state.Next)
            {
                _queue.Enqueue(new Entry(null, state.End));
            }
            if (state.Parked is null || !state.Parked.Remove(state.Next, out T[]? next))
            {
                return;
            }
            values = next;
        }
    }

    private bool BeginPutUnsynchronized()
    {
        if (_putting)
        {
            return false;
        }
        _putting = true;
        return true;
    }

    /// <summary>Puts the queue into the channel; runs synchronously while the buffer has room, which the credits ensure unless local writers took it.</summary>
    private async Task PutAsync()
    {
        while (true)
        {
            Entry entry;
            lock (_lock)
            {
                if (!_queue.TryDequeue(out entry))
                {
                    _putting = false;
                    break;
                }
            }
            int status = 0;
            try
            {
                if (entry.Values is null)
                {
                    if (entry.End == HostedChannel.Completed)
                    {
                        _output.Complete();
                    }
                    else
                    {
                        _output.Poison(entry.End);
                    }
                    Ended(entry.End);
                    continue;
                }
                T[] values = entry.Values;
                int offset = 0;
                while (offset < values.Length)
                {
                    // As many as the channel takes now in one step; a value it cannot take yet waits as one write.
                    offset += _output.TryWriteMany(values.AsSpan(offset));
                    if (offset < values.Length)
                    {
                        ValueTask write = _output.WriteAsync(values[offset++]);
                        if (!write.IsCompletedSuccessfully)
                        {
                            await write.ConfigureAwait(false);
                        }
                    }
                }
            }
            catch (PoisonException e)
            {
                status = e.Strength;
            }
            catch (ChannelClosedException)
            {
                status = HostedChannel.Completed;
            }
            finally
            {
                if (entry.Values is not null)
                {
                    List<TaskCompletionSource>? confirmed = null;
                    lock (_lock)
                    {
                        _queued -= entry.Values.Length;
                        RemoteWriter state = entry.Writer!;
                        state.Put++;
                        if (state.Waiting is { Count: > 0 } waiting)
                        {
                            confirmed = TakeReached(waiting, state.Put);
                        }
                    }
                    confirmed?.ForEach(static d => d.TrySetResult());
                }
            }
            if (status != 0)
            {
                End(status);
            }
            Serve();
        }
        Serve();
    }

    /// <summary>
    /// A remote end poisoned (with <paramref name="status"/>, its strength) or completed (<see cref="HostedChannel.Completed"/>)
    /// the channel: unless the poison is within the channel's immunity, writers waiting for credits hear it now.
    /// </summary>
    public void Ended(int status)
    {
        if (status == HostedChannel.Completed || status > _immunity)
        {
            End(status);
        }
    }

    /// <summary>The channel ended: drops the values still queued (as a poisoned or closed channel drops them) and tells every waiting writer.</summary>
    private void End(int status)
    {
        List<TaskCompletionSource>? done = null;
        lock (_lock)
        {
            if (_status == 0)
            {
                _status = status;
            }
            while (_queue.TryDequeue(out Entry entry))
            {
                _queued -= entry.Values?.Length ?? 0;
            }
            foreach (RemoteWriter writer in _writers)
            {
                if (writer.Waiting is not null)
                {
                    (done ??= []).AddRange(writer.Waiting.Select(w => w.Done));
                    writer.Waiting = null;
                }
            }
        }
        // The values a writer waits for are dropped: what it does next meets the channel's end.
        done?.ForEach(static d => d.TrySetResult());
        Serve();
    }

    /// <summary>Answers the requests the free slots (or the channel's end) satisfy.</summary>
    private void Serve()
    {
        List<(TaskCompletionSource<WriterGrant> Request, WriterGrant Grant)>? answers = null;
        bool again;
        lock (_lock)
        {
            int wakeAt = int.MaxValue;
            // Urgent requests (least minimum) first: their writers wait.
            for (int urgent = 1; urgent >= 0; urgent--)
            {
                for (int i = 0; i < _writers.Count; i++)
                {
                    List<Request> requests = _writers[i].Requests;
                    for (int r = 0; r < requests.Count; r++)
                    {
                        Request request = requests[r];
                        if ((request.Minimum == 1) != (urgent == 1))
                        {
                            continue;
                        }
                        int free = Free();
                        if (_status == 0 && free < request.Minimum)
                        {
                            wakeAt = Math.Min(wakeAt, request.Minimum);
                            continue;
                        }
                        (answers ??= []).Add((request.Answer, new WriterGrant(i, _status == 0 ? GrantUnsynchronized(free) : 0, _status)));
                        requests.RemoveAt(r--);
                    }
                }
            }
            Interlocked.Exchange(ref _wakeAt, wakeAt);
            // A slot a reader freed before _wakeAt was published went unseen by OnSlotFreed: serve again.
            again = wakeAt != int.MaxValue && Free() >= wakeAt;
        }
        if (answers is not null)
        {
            foreach ((TaskCompletionSource<WriterGrant> request, WriterGrant grant) in answers)
            {
                request.TrySetResult(grant);
            }
        }
        if (again)
        {
            Serve();
        }
    }

    private static List<TaskCompletionSource>? TakeReached(List<(long Batches, TaskCompletionSource Done)> waiting, long put)
    {
        List<TaskCompletionSource>? reached = null;
        for (int i = waiting.Count - 1; i >= 0; i--)
        {
            if (waiting[i].Batches <= put)
            {
                (reached ??= []).Add(waiting[i].Done);
                waiting.RemoveAt(i);
            }
        }
        return reached;
    }

    private readonly record struct Request(TaskCompletionSource<WriterGrant> Answer, int Minimum);

    private readonly record struct Entry(T[]? Values, int End, RemoteWriter? Writer = null);

    private sealed class RemoteWriter
    {
        public long Next;
        public Dictionary<long, T[]>? Parked;
        public long EndAt = -1;
        public int End;
        public readonly List<Request> Requests = [];
        public long Put;
        public List<(long Batches, TaskCompletionSource Done)>? Waiting;
    }
}
