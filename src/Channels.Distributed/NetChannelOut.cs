using System.Threading.Channels;

namespace XCall.Channels.Distributed;

/// <summary>
/// The writing end of a named channel hosted by another process: a write copies the value there and returns when
/// the channel took it (for an unbuffered channel, when a reader read it), exactly as the in-process end does.
/// </summary>
/// <remarks>
/// Poison and completion cross the wire both ways. When the hosting process dies a pending and every later
/// operation fails with <see cref="Cluster.RankFailedException"/> naming the rank and the channel.
/// </remarks>
public sealed class NetChannelOut<T> : IChannelOut<T>, IPoisonable
{
    private readonly IConstructHost _host;
    private readonly ConstructAddress _address;
    private readonly ChannelCodec<T> _codec;

    internal NetChannelOut(IConstructHost host, ConstructAddress address, string name, ChannelCodec<T> codec)
    {
        _host = host;
        _address = address;
        Name = name;
        _codec = codec;
    }

    /// <summary>The channel's name.</summary>
    public string Name { get; }

    /// <inheritdoc/>
    public void Write(T item, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.CanBeCanceled)
        {
            Blocking.Wait(WriteAsync(item, cancellationToken));
            return;
        }
        int status;
        try
        {
            status = _codec.IsWord ? _host.WriteWord(_address.Id, _codec.ToWord(item)) : _host.WriteBytes(_address.Id, _codec.ToBytes(item));
        }
        catch (XCallDisconnectedException e)
        {
            throw RemoteStatus.Lost(_address, Name, e);
        }
        RemoteStatus.ThrowIfEnded(status);
    }

    /// <inheritdoc/>
    public async ValueTask WriteAsync(T item, CancellationToken cancellationToken = default)
    {
        int status;
        try
        {
            status = _codec.IsWord
                ? await _host.WriteWordAsync(_address.Id, _codec.ToWord(item), cancellationToken).ConfigureAwait(false)
                : await _host.WriteBytesAsync(_address.Id, _codec.ToBytes(item), cancellationToken).ConfigureAwait(false);
        }
        catch (XCallDisconnectedException e)
        {
            throw RemoteStatus.Lost(_address, Name, e);
        }
        RemoteStatus.ThrowIfEnded(status);
    }

    /// <inheritdoc/>
    public void Complete()
    {
        try
        {
            _host.Complete(_address.Id);
        }
        catch (XCallDisconnectedException e)
        {
            throw RemoteStatus.Lost(_address, Name, e);
        }
    }

    /// <inheritdoc/>
    public void Poison(int strength = 1)
    {
        try
        {
            _host.Poison(_address.Id, strength);
        }
        catch (XCallDisconnectedException e)
        {
            throw RemoteStatus.Lost(_address, Name, e);
        }
    }

    /// <summary>Not offered by a remote end: a <see cref="ChannelWriter{T}"/> needs TryWrite, which would cost a round trip each time.</summary>
    /// <exception cref="NotSupportedException">Always.</exception>
    public ChannelWriter<T> AsChannelWriter() =>
        throw new NotSupportedException("A remote channel end offers no ChannelWriter; use Write / WriteAsync.");
}
