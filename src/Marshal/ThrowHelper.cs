using System.Diagnostics.CodeAnalysis;

namespace XCall.Marshal;

internal static class ThrowHelper
{
    [DoesNotReturn]
    public static void Truncated(long needed, long left) =>
        throw new XCallProtocolException($"Message truncated: {needed} more byte(s) needed, {left} left.");

    [DoesNotReturn]
    public static void BadLength(string what, long length, long limit) =>
        throw new XCallProtocolException($"Invalid {what} length {length} (allowed 0..{limit}).");

    [DoesNotReturn]
    public static void BadTag(string what, int tag) =>
        throw new XCallProtocolException($"Invalid {what} tag {tag}.");

    [DoesNotReturn]
    public static void TooDeep(int limit) =>
        throw new XCallProtocolException($"Objects nested deeper than the limit of {limit}.");

    [DoesNotReturn]
    public static void WriterTooDeep(int limit) =>
        throw new XCallException($"Object graph nested deeper than {limit} levels while marshalling: it is too deep for the peer to read, or it contains a cycle.");

    [DoesNotReturn]
    public static void WriterStringTooLong(int length, int limit) =>
        throw new XCallException($"A string of {length} UTF-16 code units is longer than the reader accepts ({limit}, MarshalLimits.MaxStringLength): it is not sent.");

    [DoesNotReturn]
    public static void WriterFull(int needed) =>
        throw new InvalidOperationException($"The fixed marshal buffer has no room for {needed} more byte(s).");

    [DoesNotReturn]
    public static void WriterImmutableCycle(Type type) =>
        throw new XCallException($"An object of immutable type '{type.FullName}' contains itself through immutable objects only: it is built from its members, so it cannot be read back. " +
            "Make one type on the cycle mutable (a public parameterless constructor and settable members), or break the cycle.");

    [DoesNotReturn]
    public static void WriterValueCycle(Type type) =>
        throw new XCallException($"An object of type '{type.FullName}' is on a cycle made only of objects that compare by value (records, or types that override Equals/GetHashCode): " +
            "the reader refuses it, since comparing, hashing or printing them would never end. Break the cycle, or put an object with reference equality on it.");

    [DoesNotReturn]
    public static void BadReference(int id, int count) =>
        throw new XCallProtocolException(count == 0
            ? $"Reference id {id} names no object: none was read before it."
            : $"Reference id {id} names no object read before it (allowed 0..{count - 1}).");

    [DoesNotReturn]
    public static void ImmutableCycle(int id) =>
        throw new XCallProtocolException($"Reference id {id} names an immutable object whose members are still being read: a cycle through immutable types cannot be built.");

    [DoesNotReturn]
    public static void ReferenceTypeMismatch(int id, Type actual, Type expected) =>
        throw new XCallProtocolException($"Reference id {id} names a '{actual.FullName}' where a '{expected.FullName}' is expected.");

    [DoesNotReturn]
    public static void UnknownTypeId(ushort typeId, Type declared) =>
        throw new XCallProtocolException($"Unknown type id {typeId} for declared type '{declared.FullName}'.");

    [DoesNotReturn]
    public static void AbstractNewObject(Type declared) =>
        throw new XCallProtocolException($"New-object tag for '{declared.FullName}', which is abstract: only its known types can be created.");
}
