using System.Threading.Channels;

namespace XCall.Channels;

/// <summary>A channel's writing end seen as a System.Threading.Channels writer; an error passed to TryComplete poisons the channel.</summary>
internal sealed class ChannelOutWriter<T>(ChannelCore<T> core) : ChannelWriter<T>
{
    public override bool TryWrite(T item) => core.TryWrite(item);

    public override ValueTask WriteAsync(T item, CancellationToken cancellationToken = default) => core.WriteAsync(item, cancellationToken);

    public override ValueTask<bool> WaitToWriteAsync(CancellationToken cancellationToken = default) => core.WaitToWriteAsync(cancellationToken);

    public override bool TryComplete(Exception? error = null)
    {
        if (error is not null)
        {
            core.Poison(int.MaxValue);
        }
        return core.Complete();
    }
}
