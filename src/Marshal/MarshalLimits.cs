namespace XCall.Marshal;

/// <summary>
/// Upper bounds a <see cref="MarshalReader"/> enforces before it allocates anything. Every length read
/// from the wire is checked against what is left of the message and against these limits.
/// </summary>
public sealed class MarshalLimits
{
    /// <summary>The limits used when none are given: generous, but each one stops a hostile peer from
    /// making the reader allocate without sending the bytes.</summary>
    public static MarshalLimits Default { get; } = new();

    /// <summary>Largest string accepted, in UTF-16 code units. Default 256 Mi.</summary>
    public int MaxStringLength { get; init; } = 256 * 1024 * 1024;

    /// <summary>Largest element count of an array, list, set or dictionary. Default <see cref="Array.MaxLength"/>.</summary>
    public int MaxCollectionCount { get; init; } = Array.MaxLength;

    /// <summary>Largest total byte size of one block-copied array. Default 2 GiB minus one.</summary>
    public long MaxBlockBytes { get; init; } = int.MaxValue;

    /// <summary>Deepest nesting of objects inside objects. Default 256.</summary>
    public int MaxDepth { get; init; } = 256;
}
