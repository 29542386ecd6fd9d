namespace XCall.Marshal;

/// <summary>Constants of the payload format (see docs/remoting.md, "Argument format").</summary>
public static class WireFormat
{
    /// <summary>The length written for a null string, array or collection.</summary>
    public const int NullLength = -1;

    /// <summary>Presence tag of a null nullable value or reference.</summary>
    public const byte Null = 0;

    /// <summary>Presence tag of a present value, or of a new object of the declared type.</summary>
    public const byte Present = 1;
}
