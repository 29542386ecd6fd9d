namespace XCall.Channels;

/// <summary>
/// A channel's buffer. The channel calls it only under its own lock, so an implementation need not
/// be thread-safe; a buffer instance belongs to one channel.
/// </summary>
public interface IBuffer<T>
{
    /// <summary>Whether <see cref="Get"/> can be called.</summary>
    bool CanGet { get; }

    /// <summary>Whether <see cref="Put"/> can be called; a writer waits while it is false.</summary>
    bool CanPut { get; }

    /// <summary>Stores a written value.</summary>
    void Put(T item);

    /// <summary>Removes and returns the value the next read receives.</summary>
    T Get();
}
