using System.Threading.Channels;

namespace XCall.Channels.Distributed;

/// <summary>
/// A reading end of a named channel hosted by another process (a One2Any or Any2Any, whose readers may be
/// anywhere): a read takes a value there and copies it here. Shared reading ends cannot guard an
/// <see cref="Alternative"/>, in-process or not; the single reader of a One2One or Any2One is the process that
/// created it, whose end is the in-process <see cref="ChannelIn{T}"/> and guards as usual.
/// </summary>
/// <remarks>When the hosting process dies a pending and every later read fails with <see cref="Cluster.RankFailedException"/>.</remarks>
public sealed class NetChannelIn<T> : IChannelIn<T>, IPoisonable
{
    private readonly HostLink _link;
    private readonly ChannelCodec<T> _codec;

    internal NetChannelIn(IConstructHost host, ConstructAddress address, string name, ChannelCodec<T> codec)
    {
        _link = new HostLink(host, address, name);
        _codec = codec;
    }

    /// <summary>The channel's name.</summary>
    public string Name => _link.Name;

    /// <inheritdoc/>
    public T Read(CancellationToken cancellationToken = default) => Read(extended: false, cancellationToken);

    /// <inheritdoc/>
    public ValueTask<T> ReadAsync(CancellationToken cancellationToken = default) => ReadAsync(extended: false, cancellationToken);

    /// <inheritdoc/>
    public T BeginRead(CancellationToken cancellationToken = default) => Read(extended: true, cancellationToken);

    /// <inheritdoc/>
    public ValueTask<T> BeginReadAsync(CancellationToken cancellationToken = default) => ReadAsync(extended: true, cancellationToken);

    /// <inheritdoc/>
    public void EndRead() => _link.Call(0, static (host, id, _) => host.EndRead(id));

    /// <inheritdoc/>
    public void Poison(int strength = 1) => _link.Call(strength, static (host, id, strength) => host.Poison(id, strength));

    /// <summary>Not offered by a remote end: a <see cref="ChannelReader{T}"/> needs TryRead, which would cost a round trip each time.</summary>
    /// <exception cref="NotSupportedException">Always.</exception>
    public ChannelReader<T> AsChannelReader() =>
        throw new NotSupportedException("A remote channel end offers no ChannelReader; use Read / ReadAsync.");

    /// <summary>The blocking forms: the host's async read, waited for on this thread (<see cref="HostLink.CallAndWait"/>).</summary>
    private T Read(bool extended, CancellationToken cancellationToken) => _codec.IsWord
        ? FromWord(_link.CallAndWait((extended, cancellationToken), static (host, id, s) => host.ReadWordAsync(id, s.extended, s.cancellationToken)))
        : FromBytes(_link.CallAndWait((extended, cancellationToken), static (host, id, s) => host.ReadBytesAsync(id, s.extended, s.cancellationToken)));

    private async ValueTask<T> ReadAsync(bool extended, CancellationToken cancellationToken) => _codec.IsWord
        ? FromWord(await _link.CallAsync((extended, cancellationToken), static (host, id, s) => host.ReadWordAsync(id, s.extended, s.cancellationToken)).ConfigureAwait(false))
        : FromBytes(await _link.CallAsync((extended, cancellationToken), static (host, id, s) => host.ReadBytesAsync(id, s.extended, s.cancellationToken)).ConfigureAwait(false));

    private T FromWord(WordRead word)
    {
        RemoteStatus.ThrowIfEnded(word.Poison);
        return _codec.FromWord(word.Word);
    }

    private T FromBytes(BytesRead bytes)
    {
        RemoteStatus.ThrowIfEnded(bytes.Poison);
        return _codec.FromBytes(bytes.Value);
    }
}
