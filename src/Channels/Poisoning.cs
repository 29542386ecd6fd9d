namespace XCall.Channels;

/// <summary>
/// Spreads poison: wraps a process so that when it meets a poisoned channel it poisons its other
/// ends with the same strength and ends normally. A network of wrapped processes shuts down from
/// any point that poisons one channel.
/// </summary>
public static class Poisoning
{
    /// <summary>Wraps an async process; on <see cref="PoisonException"/> it poisons <paramref name="ends"/>.</summary>
    public static Func<CancellationToken, Task> Spreading(Func<CancellationToken, Task> process, params IPoisonable[] ends)
    {
        ArgumentNullException.ThrowIfNull(process);
        return async token =>
        {
            try
            {
                await process(token).ConfigureAwait(false);
            }
            catch (PoisonException ex)
            {
                PoisonAll(ends, ex.Strength);
            }
        };
    }

    /// <summary>Wraps a process; on <see cref="PoisonException"/> it poisons <paramref name="ends"/>.</summary>
    public static IProcess Spreading(IProcess process, params IPoisonable[] ends)
    {
        ArgumentNullException.ThrowIfNull(process);
        return new DelegateProcess(Spreading(process.RunAsync, ends));
    }

    /// <summary>Poisons every end with <paramref name="strength"/>.</summary>
    public static void PoisonAll(IEnumerable<IPoisonable> ends, int strength = 1)
    {
        ArgumentNullException.ThrowIfNull(ends);
        foreach (IPoisonable end in ends)
        {
            end.Poison(strength);
        }
    }
}
