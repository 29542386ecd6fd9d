using System.Threading.Channels;

namespace XCall.Channels;

/// <summary>
/// The reading end of a channel. Async and blocking forms use the same channel, so a lightweight
/// process and a process on a dedicated thread can talk to each other.
/// </summary>
public interface IChannelIn<T> : IPoisonable
{
    /// <summary>
    /// Reads the next value, waiting for a writer. Throws <see cref="PoisonException"/> when the
    /// channel is poisoned and <see cref="ChannelClosedException"/> once it is completed and drained.
    /// </summary>
    ValueTask<T> ReadAsync(CancellationToken cancellationToken = default);

    /// <summary>Reads the next value, blocking the calling thread (for processes on dedicated threads).</summary>
    T Read(CancellationToken cancellationToken = default);

    /// <summary>
    /// Starts an extended rendezvous: returns the next value but keeps its writer waiting until
    /// <see cref="EndRead"/>. On a buffered channel the writer was released when the buffer took
    /// the value, so only an unbuffered channel holds it. Shared reader ends run one extended read
    /// at a time.
    /// </summary>
    ValueTask<T> BeginReadAsync(CancellationToken cancellationToken = default);

    /// <summary>Blocking form of <see cref="BeginReadAsync"/>.</summary>
    T BeginRead(CancellationToken cancellationToken = default);

    /// <summary>Ends the extended rendezvous <see cref="BeginReadAsync"/> started and releases its writer.</summary>
    void EndRead();

    /// <summary>This end as a System.Threading.Channels reader (ReadAllAsync ends when the writer completes).</summary>
    ChannelReader<T> AsChannelReader();
}
