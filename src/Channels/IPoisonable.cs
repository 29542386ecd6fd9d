namespace XCall.Channels;

/// <summary>Something poison can reach: a channel end.</summary>
public interface IPoisonable
{
    /// <summary>
    /// Poisons the channel unless its immunity is at least <paramref name="strength"/>: waiting
    /// and later reads and writes on it throw <see cref="PoisonException"/>. Poisoning again with
    /// a weaker or equal strength does nothing.
    /// </summary>
    void Poison(int strength = 1);
}
