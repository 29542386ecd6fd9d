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
    public static void WriterFull(int needed) =>
        throw new InvalidOperationException($"The fixed marshal buffer has no room for {needed} more byte(s).");
}
