using System.Threading.Channels;

namespace XCall.Channels;

/// <summary>The writing end of a channel.</summary>
public interface IChannelOut<T> : IPoisonable
{
    /// <summary>
    /// Writes a value. On an unbuffered channel this completes once a reader has taken the value
    /// (at EndRead for an extended read); on a buffered one once the buffer holds it. Throws
    /// <see cref="PoisonException"/> when poisoned, <see cref="ChannelClosedException"/> when completed.
    /// </summary>
    ValueTask WriteAsync(T item, CancellationToken cancellationToken = default);

    /// <summary>Writes a value, blocking the calling thread (for processes on dedicated threads).</summary>
    void Write(T item, CancellationToken cancellationToken = default);

    /// <summary>
    /// Closes the channel: writes throw, readers get what is buffered or still offered, then
    /// <see cref="ChannelClosedException"/> (a ChannelReader's ReadAllAsync simply ends).
    /// Completing twice does nothing.
    /// </summary>
    void Complete();

    /// <summary>This end as a System.Threading.Channels writer.</summary>
    ChannelWriter<T> AsChannelWriter();
}
