using XCall.Cluster;

namespace XCall.Channels.Distributed;

public sealed partial class CspWorld
{
    private readonly Dictionary<string, RemoteService<IConstructHost>> _alone = new(StringComparer.Ordinal);

    /// <summary>Creates and hosts the named One2One channel; this process is its reader (its <see cref="CspChannel{T}.In"/> can guard).</summary>
    /// <exception cref="InvalidOperationException">The name is taken.</exception>
    /// <exception cref="NotSupportedException">Values of <typeparamref name="T"/> need a <paramref name="codec"/>.</exception>
    public Task<One2One<T>> CreateOne2OneAsync<T>(string name, IBuffer<T>? buffer = null, int immunity = 0, ChannelCodec<T>? codec = null, CancellationToken cancellationToken = default) =>
        HostAsync(name, buffer, immunity, static (b, i) => new One2One<T>(b, i), ConstructKind.One2One, codec, cancellationToken);

    /// <summary>Creates and hosts the named Any2One channel; this process is its reader, writers may be anywhere.</summary>
    /// <exception cref="InvalidOperationException">The name is taken.</exception>
    /// <exception cref="NotSupportedException">Values of <typeparamref name="T"/> need a <paramref name="codec"/>.</exception>
    public Task<Any2One<T>> CreateAny2OneAsync<T>(string name, IBuffer<T>? buffer = null, int immunity = 0, ChannelCodec<T>? codec = null, CancellationToken cancellationToken = default) =>
        HostAsync(name, buffer, immunity, static (b, i) => new Any2One<T>(b, i), ConstructKind.Any2One, codec, cancellationToken);

    /// <summary>Creates and hosts the named One2Any channel; this process is its writer (its <see cref="CspChannel{T}.Out"/> can guard), readers may be anywhere.</summary>
    /// <exception cref="InvalidOperationException">The name is taken.</exception>
    /// <exception cref="NotSupportedException">Values of <typeparamref name="T"/> need a <paramref name="codec"/>.</exception>
    public Task<One2Any<T>> CreateOne2AnyAsync<T>(string name, IBuffer<T>? buffer = null, int immunity = 0, ChannelCodec<T>? codec = null, CancellationToken cancellationToken = default) =>
        HostAsync(name, buffer, immunity, static (b, i) => new One2Any<T>(b, i), ConstructKind.One2Any, codec, cancellationToken);

    /// <summary>Creates and hosts the named Any2Any channel; readers and writers may be anywhere, and it lives as long as this process.</summary>
    /// <exception cref="InvalidOperationException">The name is taken.</exception>
    /// <exception cref="NotSupportedException">Values of <typeparamref name="T"/> need a <paramref name="codec"/>.</exception>
    public Task<Any2Any<T>> CreateAny2AnyAsync<T>(string name, IBuffer<T>? buffer = null, int immunity = 0, ChannelCodec<T>? codec = null, CancellationToken cancellationToken = default) =>
        HostAsync(name, buffer, immunity, static (b, i) => new Any2Any<T>(b, i), ConstructKind.Any2Any, codec, cancellationToken);

    /// <summary>
    /// The writing end of the named channel, once some process created it: the in-process end when this process
    /// hosts it, else a <see cref="NetChannelOut{T}"/>. Every end returned is also an <see cref="IPoisonable"/>.
    /// </summary>
    /// <exception cref="InvalidOperationException">The name is a One2Any (written by its host only) or no channel of <typeparamref name="T"/>.</exception>
    public async Task<IChannelOut<T>> OpenOutAsync<T>(string name, ChannelCodec<T>? codec = null, CancellationToken cancellationToken = default)
    {
        (object? local, ConstructAddress address) = await ResolveAsync(name, cancellationToken).ConfigureAwait(false);
        if (local is not null)
        {
            return Local<T>(name, local).Out;
        }
        if (address.Kind is ConstructKind.One2Any or ConstructKind.Barrier or ConstructKind.Bucket)
        {
            throw new InvalidOperationException($"'{name}' is a {address.Kind}: only the process that created it writes to it.");
        }
        IConstructHost host = await HostOfAsync(address, cancellationToken).ConfigureAwait(false);
        WriterGrant grant;
        try
        {
            grant = await host.OpenWriterAsync(address.Id).ConfigureAwait(false);
        }
        catch (XCallDisconnectedException e)
        {
            throw RemoteStatus.Lost(address, name, e);
        }
        return new NetChannelOut<T>(host, address, name, codec ?? ChannelCodec<T>.Default, grant);
    }

    /// <summary>
    /// The reading end of the named channel, once some process created it: the in-process end when this process
    /// hosts it, else a <see cref="NetChannelIn{T}"/> (of a One2Any or Any2Any). Every end returned is also an <see cref="IPoisonable"/>.
    /// </summary>
    /// <exception cref="InvalidOperationException">The name is a One2One or Any2One (read by its host only) or no channel of <typeparamref name="T"/>.</exception>
    public async Task<IChannelIn<T>> OpenInAsync<T>(string name, ChannelCodec<T>? codec = null, CancellationToken cancellationToken = default)
    {
        (object? local, ConstructAddress address) = await ResolveAsync(name, cancellationToken).ConfigureAwait(false);
        if (local is not null)
        {
            return Local<T>(name, local).In;
        }
        if (address.Kind is not (ConstructKind.One2Any or ConstructKind.Any2Any))
        {
            throw new InvalidOperationException($"'{name}' is a {address.Kind}: only the process that created it reads from it.");
        }
        return new NetChannelIn<T>(await HostOfAsync(address, cancellationToken).ConfigureAwait(false), address, name, codec ?? ChannelCodec<T>.Default);
    }

    /// <summary>
    /// The named barrier with <paramref name="enrolled"/> processes enrolled in all (every process that uses it
    /// names the same count): the first process to name it hosts it, the others share it.
    /// </summary>
    public async Task<NamedBarrier> BarrierAsync(string name, int enrolled, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(enrolled);
        return await CreateOrOpenAsync(name, ConstructKind.Barrier, () => new Barrier(enrolled),
            local => new NamedBarrier(name, (Barrier)local), (host, address) => new NamedBarrier(name, host, address), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The named bucket: the first process to name it hosts it, the others share it.</summary>
    public Task<NamedBucket> BucketAsync(string name, CancellationToken cancellationToken = default) =>
        CreateOrOpenAsync(name, ConstructKind.Bucket, static () => new Bucket(),
            local => new NamedBucket(name, (Bucket)local), (host, address) => new NamedBucket(name, host, address), cancellationToken);

    private static CspChannel<T> Local<T>(string name, object local) => local as CspChannel<T>
        ?? throw new InvalidOperationException($"'{name}' is a {local.GetType().Name}, not a channel of {typeof(T).Name}.");

    private async Task<TChannel> HostAsync<T, TChannel>(string name, IBuffer<T>? buffer, int immunity, Func<IBuffer<T>?, int, TChannel> create, ConstructKind kind,
        ChannelCodec<T>? codec, CancellationToken cancellationToken)
        where TChannel : CspChannel<T>
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        if (World is null)
        {
            // In stand-alone mode values are never copied, so any type goes, and the buffer is the channel's own.
            TChannel alone = create(buffer, immunity);
            Publish(name, alone);
            return alone;
        }
        // Across processes the codec is checked now, and a buffer is counted so remote writers get credits for its free slots.
        ChannelCodec<T> copies = codec ?? ChannelCodec<T>.Default;
        CountedBuffer<T>? counted = buffer is null ? null : CountedBuffer<T>.Wrap(buffer);
        TChannel channel = create(counted, immunity);
        Intake<T>? intake = counted is null ? null : new Intake<T>(channel.Out, counted, immunity);
        Publish(name, channel);
        RemoteEndsPump? pump = null;
        if (intake is null)
        {
            // Unbuffered: a local end that waits reads the remote ends' connection meanwhile (a buffered channel's
            // values come in one-way batches, which run elsewhere anyway).
            pump = new RemoteEndsPump(_host);
            channel.BlockingWaiter = pump;
        }
        int id = _host.Add(new HostedChannel<T>(channel.In, channel.Out, copies, intake, pump));
        try
        {
            await World.Names.RegisterAsync(name, Address(id, kind).ToString(), cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            Unpublish(name);
            throw;
        }
        return channel;
    }

    private async Task<TNamed> CreateOrOpenAsync<TNamed>(string name, ConstructKind kind, Func<object> create, Func<object, TNamed> wrapLocal,
        Func<IConstructHost, ConstructAddress, TNamed> wrapRemote, CancellationToken cancellationToken)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        object construct;
        lock (_lock)
        {
            if (_local.TryGetValue(name, out object? known))
            {
                return wrapLocal(known);
            }
            construct = create();
            if (World is null)
            {
                _local.Add(name, construct);
                return wrapLocal(construct);
            }
        }
        int id = _host.Add(construct);
        ConstructAddress mine = Address(id, kind);
        try
        {
            await World.Names.RegisterAsync(name, mine.ToString(), cancellationToken).ConfigureAwait(false);
        }
        catch (InvalidOperationException)
        {
            // Another process (or another thread of this one) named it first: share that one.
            (object? local, ConstructAddress address) = await ResolveAsync(name, cancellationToken).ConfigureAwait(false);
            if (local is not null)
            {
                return wrapLocal(local);
            }
            if (address.Kind != kind)
            {
                throw new InvalidOperationException($"'{name}' is a {address.Kind}, not a {kind}.");
            }
            return wrapRemote(await HostOfAsync(address, cancellationToken).ConfigureAwait(false), address);
        }
        lock (_lock)
        {
            _local.TryAdd(name, construct);
        }
        return wrapLocal(construct);
    }

    private ConstructAddress Address(int id, ConstructKind kind) => new(Rank, id, kind, World!.GetAddress(Rank));

    private void Publish(string name, object construct)
    {
        TaskCompletionSource<object>? waiter;
        lock (_lock)
        {
            if (!_local.TryAdd(name, construct))
            {
                throw new InvalidOperationException($"The name '{name}' is already taken in this process.");
            }
            _waiting.Remove(name, out waiter);
        }
        waiter?.TrySetResult(construct);
    }

    private void Unpublish(string name)
    {
        lock (_lock)
        {
            _local.Remove(name);
        }
    }

    /// <summary>The construct of <paramref name="name"/> when this process hosts it, else where it lives; waits until some process names it.</summary>
    private async Task<(object? Local, ConstructAddress Address)> ResolveAsync(string name, CancellationToken cancellationToken)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        Task<object> pending;
        lock (_lock)
        {
            if (_local.TryGetValue(name, out object? local))
            {
                return (local, default);
            }
            if (World is not null)
            {
                pending = null!;
            }
            else
            {
                if (!_waiting.TryGetValue(name, out TaskCompletionSource<object>? waiter))
                {
                    waiter = new TaskCompletionSource<object>(TaskCreationOptions.RunContinuationsAsynchronously);
                    _waiting.Add(name, waiter);
                }
                pending = waiter.Task;
            }
        }
        if (World is null)
        {
            return (await pending.WaitAsync(cancellationToken).ConfigureAwait(false), default);
        }
        string value = await World.Names.WaitForAsync(name, Timeout.InfiniteTimeSpan, cancellationToken).ConfigureAwait(false);
        ConstructAddress address = ConstructAddress.Parse(name, value);
        if (address.Server == World.GetAddress(Rank))
        {
            lock (_lock)
            {
                if (_local.TryGetValue(name, out object? local))
                {
                    return (local, default);
                }
            }
        }
        return (null, address);
    }

    /// <summary>The host of <paramref name="address"/>: through the world's connection to its rank, or (for processes that each joined a world of one) its own address.</summary>
    private async Task<IConstructHost> HostOfAsync(ConstructAddress address, CancellationToken cancellationToken)
    {
        ClusterWorld world = World!;
        if (world.Size > 1)
        {
            return await world.OpenAsync<IConstructHost>(address.Rank, cancellationToken).ConfigureAwait(false);
        }
        lock (_lock)
        {
            if (_alone.TryGetValue(address.Server, out RemoteService<IConstructHost>? open))
            {
                return open.Proxy;
            }
        }
        RemoteService<IConstructHost> service = await Remote.OpenAsync<IConstructHost>(address.Server, cancellationToken: cancellationToken).ConfigureAwait(false);
        lock (_lock)
        {
            if (_alone.TryAdd(address.Server, service))
            {
                return service.Proxy;
            }
        }
        service.Dispose();
        lock (_lock)
        {
            return _alone[address.Server].Proxy;
        }
    }
}
