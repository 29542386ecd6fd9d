using System.Threading.Channels;

namespace XCall.Channels;

/// <summary>
/// The writing end of a channel, and the output guard for an <see cref="Alternative"/>: ready when a
/// write would complete at once (a reader waits, or the buffer has room). Only a channel with one
/// writer (One2One, One2Any) can guard. A reader that is itself selecting does not make the output
/// ready: two Alternatives on the two ends of one channel never meet.
/// </summary>
public sealed class ChannelOut<T> : Guard, IChannelOut<T>
{
    private readonly ChannelCore<T> _core;
    private ChannelWriter<T>? _writer;

    internal ChannelOut(ChannelCore<T> core) => _core = core;

    /// <inheritdoc/>
    public ValueTask WriteAsync(T item, CancellationToken cancellationToken = default) => _core.WriteAsync(item, cancellationToken);

    /// <inheritdoc/>
    public void Write(T item, CancellationToken cancellationToken = default) => Blocking.Wait(_core.WriteAsync(item, cancellationToken), _core.BlockingWaiter);

    /// <summary>
    /// Writes as many of <paramref name="items"/>, from the first, as can be written now without waiting (to a waiting
    /// reader, then into the buffer while it has room), all in one step, and returns how many it wrote. It writes
    /// none when the channel is completed, when writers wait already, or when nothing could take a value; it throws
    /// <see cref="PoisonException"/> when the channel is poisoned. A buffered producer that has many values at once
    /// pays one lock and one reader wake-up per call instead of per value.
    /// </summary>
    public int TryWriteMany(ReadOnlySpan<T> items) => _core.TryWriteMany(items);

    /// <inheritdoc/>
    public void Complete() => _core.Complete();

    /// <inheritdoc/>
    public void Poison(int strength = 1) => _core.Poison(strength);

    /// <inheritdoc/>
    public ChannelWriter<T> AsChannelWriter() => _writer ??= new ChannelOutWriter<T>(_core);

    internal override void CheckCanGuard() => _core.CheckCanGuard(output: true);

    internal override bool Poll() => _core.PollGuard(output: true);

    internal override bool Enable(Alternative alternative) => _core.EnableGuard(alternative, output: true);

    internal override bool Disable(Alternative alternative) => _core.DisableGuard(alternative, output: true);
}
