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
    private readonly CreditWriter<T>? _buffered;

    internal NetChannelOut(IConstructHost host, ConstructAddress address, string name, ChannelCodec<T> codec, WriterGrant grant)
    {
        _link = new HostLink(host, address, name);
        _codec = codec;
        if (grant.Writer >= 0)
        {
            _buffered = new CreditWriter<T>(_link, codec, grant, shared: address.Kind is ConstructKind.Any2One or ConstructKind.Any2Any);
        }
    }

    /// <summary>The channel's name.</summary>
    public string Name => _link.Name;

    /// <inheritdoc/>
    public void Write(T item, CancellationToken cancellationToken = default)
    {
        if (_buffered is not null)
        {
            while (!_buffered.TryWrite(item))
            {
                if (cancellationToken.CanBeCanceled)
                {
                    Blocking.Wait(_buffered.WaitForCreditsAsync(cancellationToken));
                }
                else
                {
                    _buffered.WaitForCredits();
                }
            }
            return;
        }
        // The host's async write (its methods never block its threads, see IConstructHost), waited for on this thread.
        int status = _codec.IsWord
            ? _link.CallAndWait((_codec.ToWord(item), cancellationToken), static (host, id, s) => host.WriteWordAsync(id, s.Item1, s.cancellationToken))
            : _link.CallAndWait((_codec.ToBytes(item), cancellationToken), static (host, id, s) => host.WriteBytesAsync(id, s.Item1, s.cancellationToken));
        RemoteStatus.ThrowIfEnded(status);
    }

    /// <inheritdoc/>
    public ValueTask WriteAsync(T item, CancellationToken cancellationToken = default)
    {
        if (_buffered is not null && _buffered.TryWrite(item))
        {
            return default;
        }
        return WriteSlowAsync(item, cancellationToken);
    }

    /// <inheritdoc/>
    public void Complete()
    {
        if (_buffered is not null)
        {
            _buffered.End(0);
            return;
        }
        _link.Call(0, static (host, id, _) => host.Complete(id));
    }

    /// <inheritdoc/>
    public void Poison(int strength = 1)
    {
        if (_buffered is not null)
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(strength);
            _buffered.End(strength);
            return;
        }
        _link.Call(strength, static (host, id, strength) => host.Poison(id, strength));
    }

    /// <summary>Not offered by a remote end: a <see cref="ChannelWriter{T}"/> needs TryWrite, which would cost a round trip each time.</summary>
    /// <exception cref="NotSupportedException">Always.</exception>
    public ChannelWriter<T> AsChannelWriter() =>
        throw new NotSupportedException("A remote channel end offers no ChannelWriter; use Write / WriteAsync.");

    private async ValueTask WriteSlowAsync(T item, CancellationToken cancellationToken)
    {
        if (_buffered is not null)
        {
            do
            {
                await _buffered.WaitForCreditsAsync(cancellationToken).ConfigureAwait(false);
            }
            while (!_buffered.TryWrite(item));
            return;
        }
        int status = _codec.IsWord
            ? await _link.CallAsync((_codec.ToWord(item), cancellationToken), static (host, id, s) => host.WriteWordAsync(id, s.Item1, s.cancellationToken)).ConfigureAwait(false)
            : await _link.CallAsync((_codec.ToBytes(item), cancellationToken), static (host, id, s) => host.WriteBytesAsync(id, s.Item1, s.cancellationToken)).ConfigureAwait(false);
        RemoteStatus.ThrowIfEnded(status);
    }
}
