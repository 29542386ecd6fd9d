namespace XCall.Channels;

/// <summary>
/// Thrown by an operation on a poisoned channel. A process that catches it usually poisons its
/// other channel ends and ends (see <see cref="Poisoning"/>), so poison spreads through a network.
/// </summary>
public sealed class PoisonException : Exception
{
    /// <summary>Creates the exception for poison of the given strength.</summary>
    public PoisonException(int strength)
        : base($"The channel is poisoned (strength {strength}).") => Strength = strength;

    /// <summary>Creates the exception for poison of strength 1.</summary>
    public PoisonException()
        : this(1)
    {
    }

    /// <summary>Creates the exception with a message, for poison of strength 1.</summary>
    public PoisonException(string message)
        : base(message) => Strength = 1;

    /// <summary>Creates the exception with a message and an inner exception, for poison of strength 1.</summary>
    public PoisonException(string message, Exception innerException)
        : base(message, innerException) => Strength = 1;

    /// <summary>The strength of the poison; a process spreading it passes it on unchanged.</summary>
    public int Strength { get; }
}
