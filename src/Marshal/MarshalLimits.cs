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

    /// <summary>
    /// Most keys of one hash set or dictionary that may fall in one bucket of its table (strings are not
    /// counted: their hash codes are randomized). Keys whose hash codes a peer can predict (integers, enums,
    /// <see cref="Guid"/>, user types) could otherwise be chosen to collide and make reading quadratic.
    /// Default 64: well-spread keys put a handful in a bucket; raise it only for key types whose own hash
    /// codes collide.
    /// </summary>
    public int MaxKeysPerBucket { get; init; } = 64;

    /// <summary>Deepest nesting of objects inside objects. Default 256.</summary>
    public int MaxDepth { get; init; } = 256;
}
