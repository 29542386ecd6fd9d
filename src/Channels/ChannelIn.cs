using System.Threading.Channels;

namespace XCall.Channels;

/// <summary>
/// The reading end of a channel, and the input guard for an <see cref="Alternative"/>: ready when a
/// value can be read. Only a channel with one reader (One2One, Any2One) can guard, because after
/// the Alternative chooses it the process reads, and no other reader may take the value first.
/// </summary>
public sealed class ChannelIn<T> : Guard, IChannelIn<T>
{
    private readonly ChannelCore<T> _core;
    private ChannelReader<T>? _reader;

    internal ChannelIn(ChannelCore<T> core) => _core = core;

    /// <inheritdoc/>
    public ValueTask<T> ReadAsync(CancellationToken cancellationToken = default) => _core.ReadAsync(extended: false, cancellationToken);

    /// <inheritdoc/>
    public T Read(CancellationToken cancellationToken = default) => Blocking.Wait(_core.ReadAsync(extended: false, cancellationToken), _core.BlockingWaiter);

    /// <inheritdoc/>
    public ValueTask<T> BeginReadAsync(CancellationToken cancellationToken = default) =>
        _core.SharedReaders ? _core.BeginReadSharedAsync(cancellationToken) : _core.ReadAsync(extended: true, cancellationToken);

    /// <inheritdoc/>
    public T BeginRead(CancellationToken cancellationToken = default) => Blocking.Wait(BeginReadAsync(cancellationToken), _core.BlockingWaiter);

    /// <inheritdoc/>
    public void EndRead() => _core.EndRead();

    /// <inheritdoc/>
    public void Poison(int strength = 1) => _core.Poison(strength);

    /// <inheritdoc/>
    public ChannelReader<T> AsChannelReader() => _reader ??= new ChannelInReader<T>(_core);

    internal override void CheckCanGuard() => _core.CheckCanGuard(output: false);

    internal override bool Poll() => _core.PollGuard(output: false);

    internal override bool Enable(Alternative alternative) => _core.EnableGuard(alternative, output: false);

    internal override bool Disable(Alternative alternative) => _core.DisableGuard(alternative, output: false);
}
