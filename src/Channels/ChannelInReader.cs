using System.Threading.Channels;

namespace XCall.Channels;

/// <summary>A channel's reading end seen as a System.Threading.Channels reader.</summary>
internal sealed class ChannelInReader<T>(ChannelCore<T> core) : ChannelReader<T>
{
    public override bool TryRead(out T item) => core.TryRead(out item);

    public override ValueTask<T> ReadAsync(CancellationToken cancellationToken = default) => core.ReadAsync(extended: false, cancellationToken);

    public override ValueTask<bool> WaitToReadAsync(CancellationToken cancellationToken = default) => core.WaitToReadAsync(cancellationToken);
}
