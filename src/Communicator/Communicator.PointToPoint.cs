using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace XCall.Communicator;

public sealed partial class Communicator
{
    /// <summary>Sends <paramref name="data"/> to <paramref name="destination"/> with <paramref name="tag"/>; returns when the array may be changed again.</summary>
    /// <exception cref="Cluster.RankFailedException">The destination failed.</exception>
    public void Send<T>(T[] data, int destination, int tag) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(data);
        CheckTag(tag, receiving: false);
        SendCore<T>(data, data, 0, destination, tag, PointToPointContext);
    }

    /// <summary>Sends the values of <paramref name="data"/> to <paramref name="destination"/> with <paramref name="tag"/>.</summary>
    /// <exception cref="Cluster.RankFailedException">The destination failed.</exception>
    public void Send<T>(ReadOnlySpan<T> data, int destination, int tag) where T : unmanaged
    {
        CheckTag(tag, receiving: false);
        SendCore(data, null, 0, destination, tag, PointToPointContext);
    }

    /// <summary>
    /// Sends the values of <paramref name="data"/> to <paramref name="destination"/> with <paramref name="tag"/>; returns
    /// when its memory may be changed again. A large message from an array's memory is lent as the array itself is
    /// (<see cref="Send{T}(T[], int, int)"/>), where a span's values are copied into the message.
    /// </summary>
    /// <exception cref="Cluster.RankFailedException">The destination failed.</exception>
    public void Send<T>(ReadOnlyMemory<T> data, int destination, int tag) where T : unmanaged
    {
        CheckTag(tag, receiving: false);
        SendMemory(data, destination, tag);
    }

    /// <summary>Sends one value to <paramref name="destination"/> with <paramref name="tag"/>.</summary>
    /// <exception cref="Cluster.RankFailedException">The destination failed.</exception>
    public void Send<T>(T value, int destination, int tag) where T : unmanaged
    {
        CheckTag(tag, receiving: false);
        SendCore(new ReadOnlySpan<T>(in value), null, 0, destination, tag, PointToPointContext);
    }

    /// <summary>
    /// Sends <paramref name="data"/> and returns once a receive on <paramref name="destination"/> has taken it
    /// (MPI's synchronous send).
    /// </summary>
    /// <exception cref="Cluster.RankFailedException">The destination failed.</exception>
    public void SendSync<T>(T[] data, int destination, int tag) where T : unmanaged =>
        SendSyncAsync(data, destination, tag).GetAwaiter().GetResult();

    /// <summary>
    /// Sends <paramref name="data"/> and completes once a receive on <paramref name="destination"/> has taken it.
    /// Cancelling withdraws the message unless a receive has already taken it (then the task completes normally).
    /// </summary>
    /// <exception cref="Cluster.RankFailedException">The destination failed.</exception>
    public async Task SendSyncAsync<T>(T[] data, int destination, int tag, CancellationToken cancellationToken = default) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(data);
        CheckTag(tag, receiving: false);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)destination, (uint)Size, nameof(destination));
        int to = _worldRanks[destination];
        byte[] payload = MemoryMarshal.AsBytes(data.AsSpan()).ToArray();
        if (to != _messaging.World.Rank)
        {
            _messaging.CountPost(to);
        }
        try
        {
            await Peer(to).PostSyncAsync(_messaging.World.Rank, PointToPointContext, tag, payload, cancellationToken).ConfigureAwait(false);
        }
        catch (XCallException e)
        {
            throw _messaging.Failed(to, e);
        }
    }

    /// <summary>
    /// Starts sending <paramref name="data"/> (MPI's <c>Isend</c>): the task completes when its memory may be changed
    /// again. A token cancelled before the send starts cancels it; a send that started completes.
    /// </summary>
    public Task SendAsync<T>(ReadOnlyMemory<T> data, int destination, int tag, CancellationToken cancellationToken = default) where T : unmanaged
    {
        CheckTag(tag, receiving: false);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)destination, (uint)Size, nameof(destination));
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }
        int bytes = data.Length * Unsafe.SizeOf<T>();
        if (bytes < AsyncSendOnPoolBytes)
        {
            try
            {
                SendMemory(data, destination, tag);
                return Task.CompletedTask;
            }
            catch (Exception e)
            {
                return Task.FromException(e);
            }
        }
        return Task.Run(() => SendMemory(data, destination, tag), CancellationToken.None);
    }

    private void SendMemory<T>(ReadOnlyMemory<T> data, int destination, int tag) where T : unmanaged
    {
        if (MemoryMarshal.TryGetArray(data, out ArraySegment<T> segment))
        {
            SendCore<T>(segment, segment.Array, segment.Offset, destination, tag, PointToPointContext);
        }
        else
        {
            SendCore(data.Span, null, 0, destination, tag, PointToPointContext);
        }
    }

    /// <summary>Receives a message from <paramref name="source"/> (or <see cref="AnySource"/>) with <paramref name="tag"/> (or <see cref="AnyTag"/>) into <paramref name="buffer"/>.</summary>
    /// <returns>Who sent it, its tag and its length (the buffer's first values hold it).</returns>
    /// <exception cref="MessageTruncatedException">The message is longer than the buffer.</exception>
    /// <exception cref="Cluster.RankFailedException">The source (or, for any source, some rank) failed before a message came.</exception>
    public MessageStatus Receive<T>(Memory<T> buffer, int source, int tag) where T : unmanaged
    {
        CheckTag(tag, receiving: true);
        int from = SourceToWorld(source);
        if (TryReceiveFast(MemoryMarshal.AsBytes(buffer.Span), from, PointToPointContext, tag, out MessageStatus status, out int spun))
        {
            return Local(status);
        }
        return Local(Await(Post(new ReceiveRequest<T>(buffer, from, PointToPointContext, tag, asynchronous: false)), spun));
    }

    /// <summary>Receives a message of one value.</summary>
    /// <exception cref="MessageTruncatedException">The message holds more than one value.</exception>
    /// <exception cref="Cluster.RankFailedException">The source failed before a message came.</exception>
    public T Receive<T>(int source, int tag) where T : unmanaged
    {
        CheckTag(tag, receiving: true);
        int from = SourceToWorld(source);
        T one = default;
        MessageStatus status;
        if (TryReceiveFast(MemoryMarshal.AsBytes(new Span<T>(ref one)), from, PointToPointContext, tag, out status, out int spun))
        {
            status = Local(status);
        }
        else
        {
            var value = new T[1];
            status = Local(Await(Post(new ReceiveRequest<T>(value, from, PointToPointContext, tag, asynchronous: false)), spun));
            one = value[0];
        }
        if (status.ByteCount != Unsafe.SizeOf<T>())
        {
            throw new MessageTruncatedException(status.Source, status.Tag, status.ByteCount, Unsafe.SizeOf<T>());
        }
        return one;
    }

    /// <summary>Receives a message into a new array as long as the message.</summary>
    /// <exception cref="Cluster.RankFailedException">The source failed before a message came.</exception>
    public T[] ReceiveArray<T>(int source, int tag, out MessageStatus status) where T : unmanaged
    {
        CheckTag(tag, receiving: true);
        ReceiveRequest<T> request = Post(new ReceiveRequest<T>(SourceToWorld(source), PointToPointContext, tag, asynchronous: false));
        status = Local(Await(request));
        return MemoryMarshal.TryGetArray((ReadOnlyMemory<T>)request.Received, out ArraySegment<T> whole) && whole.Offset == 0 && whole.Count == whole.Array!.Length
            ? whole.Array : request.Received.ToArray();
    }

    /// <summary>
    /// Starts a receive (MPI's <c>Irecv</c>) into <paramref name="buffer"/>, which must not be touched until the task
    /// completes. Cancelling withdraws the receive unless a message already matched it.
    /// </summary>
    public Task<MessageStatus> ReceiveAsync<T>(Memory<T> buffer, int source, int tag, CancellationToken cancellationToken = default) where T : unmanaged
    {
        CheckTag(tag, receiving: true);
        var request = new ReceiveRequest<T>(buffer, SourceToWorld(source), PointToPointContext, tag, asynchronous: true) { Bell = _messaging.Inbox };
        return LocalAsync(Start(request, cancellationToken));
    }

    /// <summary>Receives a message into a new array as long as the message, asynchronously.</summary>
    public async Task<T[]> ReceiveArrayAsync<T>(int source, int tag, CancellationToken cancellationToken = default) where T : unmanaged
    {
        CheckTag(tag, receiving: true);
        var request = new ReceiveRequest<T>(SourceToWorld(source), PointToPointContext, tag, asynchronous: true) { Bell = _messaging.Inbox };
        await Start(request, cancellationToken).ConfigureAwait(false);
        return request.Received.ToArray();
    }

    /// <summary>
    /// A blocking receive's path with no request: takes a matching message the mailbox holds, or (from one rank on
    /// this node) spins on its eager ring a while and takes a small message straight from it into
    /// <paramref name="destination"/>. False when the receive must be posted; <paramref name="spun"/> then says how
    /// many turns it spun, which the posted receive's wait does not spin again.
    /// </summary>
    private bool TryReceiveFast(Span<byte> destination, int worldSource, long context, int tag, out MessageStatus status, out int spun)
    {
        spun = 0;
        FastTake taken = worldSource != AnySource && _messaging.Inbox is { } inbox && inbox.Covers(worldSource)
            ? inbox.TryReceive(worldSource, context, tag, destination, out status, out spun)
            : _messaging.Mailbox.TryTakeHeld(worldSource, context, tag, destination, out status);
        return taken == FastTake.Taken;
    }

    private Task<MessageStatus> Start(ReceiveRequest request, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled<MessageStatus>(cancellationToken);
        }
        _messaging.Mailbox.Receive(request);
        if (cancellationToken.CanBeCanceled && !request.Task.IsCompleted)
        {
            CancellationTokenRegistration registration = cancellationToken.Register(() =>
            {
                if (_messaging.Mailbox.Cancel(request))
                {
                    request.Fail(new OperationCanceledException(cancellationToken));
                }
            });
            _ = request.Task.ContinueWith(_ => registration.Dispose(), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
        return request.Task;
    }

    /// <summary>Waits until a message from <paramref name="source"/> with <paramref name="tag"/> has arrived and returns its status, leaving it to be received.</summary>
    /// <exception cref="Cluster.RankFailedException">The source failed before a message came.</exception>
    public MessageStatus Probe(int source, int tag) => ProbeAsync(source, tag).GetAwaiter().GetResult();

    /// <summary>Completes once a message from <paramref name="source"/> with <paramref name="tag"/> has arrived, with its status; the message stays to be received.</summary>
    public Task<MessageStatus> ProbeAsync(int source, int tag, CancellationToken cancellationToken = default)
    {
        CheckTag(tag, receiving: true);
        return LocalAsync(_messaging.Mailbox.ProbeAsync(SourceToWorld(source), PointToPointContext, tag, cancellationToken));
    }

    /// <summary>The status of a message from <paramref name="source"/> with <paramref name="tag"/> that has arrived, if one has (MPI's <c>Iprobe</c>).</summary>
    public bool TryProbe(int source, int tag, out MessageStatus status)
    {
        CheckTag(tag, receiving: true);
        MessageStatus? found = _messaging.Mailbox.TryProbe(SourceToWorld(source), PointToPointContext, tag);
        status = found is { } s ? Local(s) : default;
        return found is not null;
    }

    /// <summary>Waits for every request (send or receive task); throws the first failure after all ended.</summary>
    public static void WaitAll(params Task[] requests) => Task.WhenAll(requests).GetAwaiter().GetResult();

    /// <summary>Waits until one request (send or receive task) ends and returns its index.</summary>
    public static int WaitAny(params Task[] requests) => Task.WaitAny(requests);
}
