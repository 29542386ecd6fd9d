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
    private readonly HostLink _link;
    private readonly ChannelCodec<T> _codec;

    internal NetChannelOut(IConstructHost host, ConstructAddress address, string name, ChannelCodec<T> codec)
    {
        _link = new HostLink(host, address, name);
        _codec = codec;
    }

    /// <summary>The channel's name.</summary>
    public string Name => _link.Name;

    /// <inheritdoc/>
    public void Write(T item, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.CanBeCanceled)
        {
            Blocking.Wait(WriteAsync(item, cancellationToken));
            return;
        }
        int status = _codec.IsWord
            ? _link.Call(_codec.ToWord(item), static (host, id, word) => host.WriteWord(id, word))
            : _link.Call(_codec.ToBytes(item), static (host, id, bytes) => host.WriteBytes(id, bytes));
        RemoteStatus.ThrowIfEnded(status);
    }

    /// <inheritdoc/>
    public async ValueTask WriteAsync(T item, CancellationToken cancellationToken = default)
    {
        int status = _codec.IsWord
            ? await _link.CallAsync((_codec.ToWord(item), cancellationToken), static (host, id, s) => host.WriteWordAsync(id, s.Item1, s.cancellationToken)).ConfigureAwait(false)
            : await _link.CallAsync((_codec.ToBytes(item), cancellationToken), static (host, id, s) => host.WriteBytesAsync(id, s.Item1, s.cancellationToken)).ConfigureAwait(false);
        RemoteStatus.ThrowIfEnded(status);
    }

    /// <inheritdoc/>
    public void Complete() => _link.Call(0, static (host, id, _) => host.Complete(id));

    /// <inheritdoc/>
    public void Poison(int strength = 1) => _link.Call(strength, static (host, id, strength) => host.Poison(id, strength));

    /// <summary>Not offered by a remote end: a <see cref="ChannelWriter{T}"/> needs TryWrite, which would cost a round trip each time.</summary>
    /// <exception cref="NotSupportedException">Always.</exception>
    public ChannelWriter<T> AsChannelWriter() =>
        throw new NotSupportedException("A remote channel end offers no ChannelWriter; use Write / WriteAsync.");
}
