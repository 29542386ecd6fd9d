namespace XCall.Marshal;

/// <summary>Constants of the payload format (see docs/remoting.md, "Argument format" and "Object graphs").</summary>
public static class WireFormat
{
    /// <summary>The length written for a null string, array or collection.</summary>
    public const int NullLength = -1;

    /// <summary>
    /// The length written for an array of unmanaged values that the sender lends instead of copying (see
    /// <see cref="IBlockLender"/>): an element count and the address of the first element in the sender follow.
    /// </summary>
    public const int LentLength = -2;

    /// <summary>Presence tag of a null nullable value or reference.</summary>
    public const byte Null = 0;

    /// <summary>Presence tag of a present value, or of a new object of the declared type.</summary>
    public const byte Present = 1;

    /// <summary>Reference tag of a new object whose runtime type is the declared type.</summary>
    public const byte NewObject = 1;

    /// <summary>Reference tag of an object already written in this message, followed by its int32 reference id.</summary>
    public const byte BackReference = 2;

    /// <summary>Reference tag of a new object of a known subtype of the declared type, followed by its ushort type id.</summary>
    public const byte NewKnownType = 3;
}
